// `npm run lint:deps`: no import cycles in src, between modules or between folders (a feature folder, a context
// folder, plumbing, the root). The context rules themselves (faces, repositories, plumbing) are ESLint's
// (eslint.config.js); this checks only what ESLint cannot see: cycles. docs/architecture.md has the map.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-module-cycles',
      severity: 'error',
      comment: 'A module that, through its imports, imports itself.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-folder-cycles',
      severity: 'error',
      scope: 'folder',
      comment: 'Two folders that import each other, directly or through others: one of them belongs below the other.',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules)/|\\.d\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
