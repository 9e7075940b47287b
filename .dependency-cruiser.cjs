// The layers of the code, checked by `npm run lint` (depcruise). From the bottom up: src/core (pure:
// no vscode, nothing above it), then the account, jobs and host floors, then the features (commands,
// studio, chat, mcp), then the composition root (extension.ts, services.ts). See src/core/README.md.
// The webview app (media/) speaks to the host only through the studio's shared protocol.
/** The studio modules that the webview app shares with the host: messages and their checks. */
const SHARED_PROTOCOL = '^src/studio/(protocol|formProtocol|compareProtocol|styleProtocol|promptProtocol|protocolValidation|galleryList)[.]ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'An import circle: the files in it can only be understood, loaded and tested together. ' +
        "(A require() of './x.js' loads a bundled chunk from dist/ at run time, not the source file next to it.)",
      from: {},
      to: { circular: true, dependencyTypesNot: ['require'] },
    },
    {
      name: 'core-is-pure',
      severity: 'error',
      comment: 'src/core is pure logic tested by plain mocha: it never imports vscode or a floor above it.',
      from: { path: '^src/core/' },
      to: { path: '^(vscode$|src/(host|jobs|commands|studio|mcp|chat|account)/|src/(extension|services)[.]ts$)' },
    },
    {
      name: 'features-not-studio',
      severity: 'error',
      comment: 'Commands, the MCP server and the chat tool never import the studio: it is a front door above them.',
      from: { path: '^src/(commands|mcp|chat)/' },
      to: { path: '^src/studio/' },
    },
    {
      name: 'media-only-protocol',
      severity: 'error',
      comment: "The webview app imports from src only the studio's shared protocol (and never vscode).",
      from: { path: '^media/' },
      to: { path: '^(src/|vscode$)', pathNot: SHARED_PROTOCOL },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(out|dist|[.]cache)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
