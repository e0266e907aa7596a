import { describe, expect, it } from 'vitest';
import { DEFAULT_REISSUE_CHECK_SECONDS, settingsFromEnv } from '../../server/startup.ts';

describe('TOOLGATE_REISSUE_CHECK_SECONDS', () => {
  it('defaults to a minute and takes a whole number of seconds', () => {
    expect(settingsFromEnv({}).reissueCheckSeconds).toBe(DEFAULT_REISSUE_CHECK_SECONDS);
    expect(DEFAULT_REISSUE_CHECK_SECONDS).toBe(60);
    expect(settingsFromEnv({ TOOLGATE_REISSUE_CHECK_SECONDS: '5' }).reissueCheckSeconds).toBe(5);
  });

  for (const bad of ['0', '-1', '1.5', 'soon', '1e400']) {
    it(`stops startup for ${JSON.stringify(bad)}, naming the variable`, () => {
      expect(() => settingsFromEnv({ TOOLGATE_REISSUE_CHECK_SECONDS: bad })).toThrow(
        `TOOLGATE_REISSUE_CHECK_SECONDS must be a positive whole number, not ${bad}`,
      );
    });
  }
});
