/** The types of scripts/generated-inputs.mjs (a plain ES module, so that the Makefile runs it before anything is built). */
export function fingerprint(): string;
