// What makes a document a Toolgate key set, shared by the signer, the SDK and the console.
// Browser-safe: no `node:` modules.

/** The key-set format this runtime understands and the server writes. */
export const KEYSET_FORMAT = 'toolgate.keyset/v1';
/** The `typ` of a key-set signature's protected header (made by a root key). */
export const KEYSET_JWS_TYP = 'toolgate-keyset+jws';
