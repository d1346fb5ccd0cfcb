// Types of scripts/build-embed.mjs, for the tests (the server only reads what it builds: src/forms/hosted/embed.ts).

/** The runtime's source, relative to the package root. */
export declare const EMBED_SOURCE: string;
/** Where the build puts it, relative to the package root. */
export declare const EMBED_OUTPUT: string;
/** What the output depends on, relative to the package root: the build is stale when one of them is newer. */
export declare const EMBED_INPUTS: readonly string[];
/** The runtime compiled from `<rootDir>/src/forms/hosted/embed.runtime.ts`, as text. */
export declare function compileEmbed(rootDir: string): Promise<string>;
/** Compiles the runtime into `<rootDir>/dist/embed/runtime.js`. */
export declare function buildEmbed(rootDir: string): Promise<void>;
/** Builds it when `<rootDir>/dist/embed/runtime.js` is missing or older than one of its inputs; true when it did. */
export declare function buildEmbedIfStale(rootDir: string): Promise<boolean>;
