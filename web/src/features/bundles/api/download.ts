import { apiRaw } from '../../../lib/api-client.ts';

/** Fetches a file through the session and hands it to the browser as a download. */
export async function download(path: string, filename: string): Promise<void> {
  const res = await apiRaw(path);
  const blob = await res.blob();
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
