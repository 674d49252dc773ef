/**
 * `/docs`: the API reference page, Scalar's API Reference rendering `/openapi.json`. Its script is
 * one pinned file from jsDelivr, loaded with Subresource Integrity: a changed file (a compromised
 * package release or CDN) is refused by the browser instead of running on this origin, where the
 * playground keeps its token (sessionStorage is per origin and tab). The page's own script is a
 * file of this Worker's, and its Content-Security-Policy lets nothing else run or connect anywhere
 * but here (no fonts or telemetry from Scalar's servers).
 *
 * Upgrading: change the version and the hash together; `integrity` is the sha384 of
 * `dist/browser/standalone.js` in the npm package (`npm pack @scalar/api-reference@<version>`),
 * which jsDelivr serves unchanged. test/browser/playground.test.mjs checks the hash against the
 * package's file and renders the page with it.
 */
export const SCALAR_VERSION = "1.76.0";
export const SCALAR_SCRIPT = `https://cdn.jsdelivr.net/npm/@scalar/api-reference@${SCALAR_VERSION}/dist/browser/standalone.js`;
export const SCALAR_INTEGRITY = "sha384-oH1C0RwqcwbVXkC+r8A+4qRoyEUQdtxAzOwumkxZtQBBcsy61FOoPt7B50OVJYYQ";

/** Where the page's own script is served (`/docs/*` reaches the Worker before the static assets). */
export const DOCS_INIT_PATH = "/docs/init.js";

export const DOCS_HTML = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>codemode-edge API</title>
  </head>
  <body>
    <div id="app"></div>
    <script src="${SCALAR_SCRIPT}" integrity="${SCALAR_INTEGRITY}" crossorigin="anonymous"></script>
    <script src="${DOCS_INIT_PATH}"></script>
  </body>
</html>
`;

export const DOCS_INIT_JS = `Scalar.createApiReference("#app", { url: "/openapi.json", withDefaultFonts: false });\n`;

/** Scripts: the pinned file and this origin's; styles inline (Scalar injects its stylesheet); requests to this origin only. */
export const DOCS_HEADERS: Readonly<Record<string, string>> = {
  "Content-Security-Policy": [
    "default-src 'none'",
    `script-src 'self' ${SCALAR_SCRIPT}`,
    "style-src 'self' 'unsafe-inline'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; "),
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
};
