import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const EMBED_RUNTIME = 'src/forms/hosted/embed.runtime.ts';

// The context map (docs/architecture.md), bottom to top: a context may import the face (index.ts) of a context
// below it, never its insides, never a context above it, never the composition root. Plumbing imports no context
// and no root. Cycles between folders are dependency-cruiser's to find (`npm run lint:deps`).
const CONTEXTS = ['outbox', 'mail-setup', 'access', 'audience', 'forms', 'sending', 'integrations'];
const PLUMBING = ['db', 'lib', 'http', 'mail', 'errors', 'pages'];
const ROOT_DIRS = ['jobs', 'cli', 'composition'];
const ROOT_FILES = ['app', 'app.docs', 'config'];
const any = (names) => names.map((n) => n.replace(/[.]/g, (c) => `\\${c}`)).join('|');
const rootImports = [
  {
    regex: `(^|/)\\.\\./(${any(ROOT_DIRS)})/`,
    message:
      'The composition root (src/jobs, src/cli, src/composition) wires contexts together; nothing below it imports it.',
  },
  {
    regex: `(^|/)\\.\\./(${any(ROOT_FILES)})\\.js$`,
    message:
      'src/app.ts, app.docs.ts and config.ts are the composition root; pass what you need in instead of importing it.',
  },
];
const boundaries = [
  {
    files: PLUMBING.map((d) => `src/${d}/**/*.ts`),
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `(^|/)\\.\\./(${any(CONTEXTS)})/`,
              message:
                'Plumbing (db, lib, http, mail, errors, pages) imports no feature: move what you need down into plumbing, or let the feature pass it in.',
            },
            ...rootImports,
          ],
        },
      ],
    },
  },
  ...CONTEXTS.map((context, i) => ({
    files: [`src/${context}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...(i > 0
              ? [
                  {
                    regex: `(^|/)\\.\\./(${any(CONTEXTS.slice(0, i))})/(?!index\\.js$)`,
                    message:
                      'Another context is reached through its face (src/<context>/index.ts) only: its features, repositories and helpers are private to it.',
                  },
                ]
              : []),
            ...(i < CONTEXTS.length - 1
              ? [
                  {
                    regex: `(^|/)\\.\\./(${any(CONTEXTS.slice(i + 1))})/`,
                    message: `${context} sits below ${CONTEXTS.slice(i + 1).join(', ')} on the context map (docs/architecture.md): it may not import them. Publish an event or take a port instead.`,
                  },
                ]
              : []),
            ...rootImports,
          ],
        },
      ],
    },
  })),
];

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'data/',
      'dist/',
      'packages/*/dist/',
      'coverage/',
      'test-output/',
      'scratch/',
      '**/generated/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Node's globals everywhere but in the embed runtime, which runs only in the browsers of other sites.
    ignores: [EMBED_RUNTIME],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // One import statement per module (types inline): `import { type A, b } from './x.js'`.
      'no-duplicate-imports': 'error',
      'no-console': ['error', { allow: ['warn', 'error'] }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  ...boundaries,
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', 'no-console': 'off' },
  },
  {
    // The web console runs in the browser (built by Vite into dist/, which is ignored above). It talks to the server
    // through the API only: no import of server source; pure code both need is a workspace package under packages/
    // (@formcast/form-appearance), and the API's types are the SDK's, generated from the OpenAPI document.
    files: ['console/src/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+src(/|$)',
              message:
                'The console imports no server source (src/): use the API through api/client.ts, or move pure code both need into a package under packages/ (like @formcast/form-appearance).',
            },
          ],
        },
      ],
    },
  },
  {
    // The embed runtime (src/forms/hosted/embed.runtime.ts, built by scripts/build-embed.mjs): browser globals only, and
    // nothing a host page's Content-Security-Policy without 'unsafe-eval' would block.
    files: [EMBED_RUNTIME],
    languageOptions: { globals: { ...globals.browser } },
    rules: { 'no-eval': 'error', 'no-implied-eval': 'error', 'no-new-func': 'error' },
  },
  {
    // A route's tags, summary and description live in its feature's *.docs.ts (src/http/operation-docs.ts), never in
    // the route's schema: one place for the prose of every operation.
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "Property[key.name='schema'] > ObjectExpression > Property[key.name=/^(tags|summary|description)$/]",
          message:
            "An operation's tags, summary and description go in the feature's *.docs.ts (src/http/operation-docs.ts), not in the route schema.",
        },
      ],
    },
  },
  {
    files: ['bin/*'],
    languageOptions: { sourceType: 'module' },
  },
);
