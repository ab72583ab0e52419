/**
 * hash-wasm's BLAKE3 alone, as `hash.ts` loads it on the first v2 upload. A named re-export, not
 * `import('hash-wasm')`: an app bundler cannot tree-shake the namespace of a dynamic import, so that took all of
 * hash-wasm (every algorithm's WebAssembly, 79 KB min+gz) into the app's lazily loaded chunk; through this file it
 * takes BLAKE3's. In the browser build it is a file of its own (`blake3.browser.js`).
 *
 * @module
 */
export { createBLAKE3 } from 'hash-wasm';
