export { KeyStore, defaultKeysDir, sharedKeyStore } from './key-store.ts';
export type { KeyInfo, SigningKey } from './key-store.ts';
export { signBundle, BUNDLE_JWS_TYP } from './sign.ts';
