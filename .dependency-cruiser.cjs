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
    // The rooms of src/core, as their READMEs say ("May import"). At the bottom common/, then the
    // gateway's contract (types, errors, the catalog, the deadline, what a paid call needs); money/,
    // requests/, answers/ and files/ build on those; the client (gateway/client.ts) composes them.
    {
      name: 'core-common-is-the-bottom',
      severity: 'error',
      comment: 'src/core/common imports nothing else of core (src/core/common/README.md).',
      from: { path: '^src/core/common/' },
      to: { path: '^src/core/', pathNot: '^src/core/common/' },
    },
    {
      name: 'core-contract-stands-alone',
      severity: 'error',
      comment: "The contract's types and errors import nothing else of core: every room uses them (src/core/gateway/README.md).",
      from: { path: `^src/core/gateway/(types|errors)[.]ts$` },
      to: { path: '^src/core/', pathNot: `^src/core/common/|^src/core/gateway/(types|errors)[.]ts$` },
    },
    {
      name: 'core-gateway-room',
      severity: 'error',
      comment:
        'Of the other rooms, only the client and its chunk entry use answers/, files/ and requests/ (src/core/gateway/README.md); ' +
        "paidCall.ts names the answers' sink type.",
      from: { path: '^src/core/gateway/', pathNot: '^src/core/gateway/(client|gatewayBundle)[.]ts$' },
      to: { path: '^src/core/(answers|files|money|requests)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'core-money-room',
      severity: 'error',
      comment: "money/ uses only common/ and the contract's types and errors (src/core/money/README.md).",
      from: { path: '^src/core/money/' },
      to: { path: '^src/core/', pathNot: `^src/core/(money|common)/|^src/core/gateway/(types|errors)[.]ts$` },
    },
    {
      name: 'core-requests-room',
      severity: 'error',
      comment: "requests/ uses common/, the contract's types, errors and catalog, and files/outputPath.ts (src/core/requests/README.md).",
      from: { path: '^src/core/requests/' },
      to: { path: '^src/core/', pathNot: `^src/core/(requests|common)/|^src/core/gateway/(types|errors|catalog)[.]ts$|^src/core/files/outputPath[.]ts$` },
    },
    {
      name: 'core-answers-room',
      severity: 'error',
      comment:
        'answers/ uses common/, the contract (types, errors, deadline, paidCall) and files/imageSniff.ts; never the client, which uses it (src/core/answers/README.md).',
      from: { path: '^src/core/answers/' },
      to: {
        path: '^src/core/',
        pathNot: `^src/core/(answers|common)/|^src/core/gateway/(types|errors|deadline|paidCall)[.]ts$|^src/core/files/imageSniff[.]ts$`,
      },
    },
    {
      name: 'core-files-room',
      severity: 'error',
      comment:
        "files/ uses common/, the contract's types and errors, and answers/ (sinks, kept and salvaged answers); " +
        "the recovery folder names the client's type only (src/core/files/README.md).",
      from: { path: '^src/core/files/' },
      to: { path: '^src/core/', pathNot: `^src/core/(files|common|answers)/|^src/core/gateway/(types|errors|client)[.]ts$` },
    },
    {
      name: 'core-files-client-type-only',
      severity: 'error',
      comment: 'files/ may name the GatewayClient type (the recovery folder downloads again through one), never load the client.',
      from: { path: '^src/core/files/' },
      to: { path: '^src/core/gateway/client[.]ts$', dependencyTypesNot: ['type-only'] },
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
