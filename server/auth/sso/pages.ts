import { html } from 'hono/html';

/**
 * The pages a person sees on the way back from the identity provider. The callback is a browser
 * navigation, not an API call: it answers HTML a person can read, never problem JSON.
 */
export function signInPage(title: string, message: string, options: { retry?: boolean; detail?: string } = {}) {
  return html`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${title} · Toolgate</title>
    <style>
      body { font: 16px/1.5 system-ui, sans-serif; max-width: 40rem; margin: 4rem auto; padding: 0 1rem; color: #1f2933; }
      h1 { font-size: 1.5rem; }
      .detail { color: #52606d; font-size: 0.9rem; }
      a.button { display: inline-block; margin-right: 1rem; padding: 0.4rem 1rem; border: 1px solid #3e4c59; border-radius: 4px; color: inherit; text-decoration: none; }
    </style>
  </head>
  <body>
    <main>
      <h1>${title}</h1>
      <p>${message}</p>
      ${options.detail ? html`<p class="detail">${options.detail}</p>` : ''}
      <p>
        ${options.retry === false ? '' : html`<a class="button" href="/v1/session/sso/start">Sign in again</a>`}
        <a class="button" href="/">Back to the console</a>
      </p>
    </main>
  </body>
</html>`;
}

/** Sends the browser on to the console with a same-site navigation, so the Strict session cookie goes along. */
export function continuePage(target = '/') {
  return html`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta http-equiv="refresh" content="0;url=${target}" />
    <title>Signed in · Toolgate</title>
  </head>
  <body>
    <p>Signed in. <a href="${target}">Continue to the console</a>.</p>
  </body>
</html>`;
}
