import type { Migration } from 'kysely';
import * as m001 from './001-initial.ts';
import * as m002 from './002-runtime-detail.ts';
import * as m003 from './003-policy-tests.ts';
import * as m004 from './004-decision-logs.ts';
import * as m005 from './005-token-version.ts';
import * as m006 from './006-token-expiry.ts';
import * as m007 from './007-single-sign-on.ts';
import * as m008 from './008-audit-checkpoints.ts';
import * as m009 from './009-audit-checkpoints-append-only.ts';
import * as m010 from './010-approvals.ts';
import * as m011 from './011-publish-requests.ts';
import * as m012 from './012-grant-urls-and-runtime-owners.ts';
import * as m013 from './013-sso-sign-in-limits.ts';
import * as m014 from './014-decision-constraints.ts';
import * as m015 from './015-table-generations.ts';

/** Every migration, by name; names sort in the order they run. */
export const migrations: Record<string, Migration> = {
  '001-initial': m001,
  '002-runtime-detail': m002,
  '003-policy-tests': m003,
  '004-decision-logs': m004,
  '005-token-version': m005,
  '006-token-expiry': m006,
  '007-single-sign-on': m007,
  '008-audit-checkpoints': m008,
  '009-audit-checkpoints-append-only': m009,
  '010-approvals': m010,
  '011-publish-requests': m011,
  '012-grant-urls-and-runtime-owners': m012,
  '013-sso-sign-in-limits': m013,
  '014-decision-constraints': m014,
  '015-table-generations': m015,
};
