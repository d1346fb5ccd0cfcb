import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const EMBED_RUNTIME = 'src/forms/hosted/embed.runtime.ts';

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'dist/', 'packages/*/dist/', 'coverage/', 'test-output/', 'scratch/', '**/generated/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Node's globals everywhere but in the embed runtime, which runs only in the browsers of other sites.
    ignores: [EMBED_RUNTIME],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-console': ['error', { allow: ['warn', 'error'] }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', 'no-console': 'off' },
  },
  {
    // The web console runs in the browser (built by Vite into dist/, which is ignored above).
    files: ['console/src/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
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
      'no-restricted-syntax': ['error', {
        selector: "Property[key.name='schema'] > ObjectExpression > Property[key.name=/^(tags|summary|description)$/]",
        message: 'An operation\'s tags, summary and description go in the feature\'s *.docs.ts (src/http/operation-docs.ts), not in the route schema.',
      }],
    },
  },
  {
    files: ['bin/*'],
    languageOptions: { sourceType: 'module' },
  },
);
