// The layers of the code, checked by `npm run lint` (depcruise). From the bottom up: src/core (pure:
// no vscode, nothing above it), then the account, jobs and host floors, then the features (commands,
// studio, chat, mcp), then the composition root (extension.ts, services.ts). See src/core/README.md.
// The webview app (media/) speaks to the host only through the studio's shared protocol.
/** The studio modules that the webview app shares with the host: messages and their checks. */
const SHARED_PROTOCOL = '^src/studio/protocol/[^/]+[.]ts$|^src/studio/gallery/galleryList[.]ts$';
const COMMAND_ROOMS = ['common', 'styles', 'images', 'promptFiles', 'results', 'account'];
const STUDIO_ROOMS = ['protocol', 'model', 'gallery', 'compare', 'region', 'panel'];

/** A room of src/commands imports, of the other rooms, only those named (its README's "May import"). */
function commandsRoom(room, mayImport, holds) {
  const others = COMMAND_ROOMS.filter((other) => other !== room && !mayImport.includes(other));
  return {
    name: `commands-${room}-room`,
    severity: 'error',
    comment: `commands/${room}/ (${holds}) imports of the other command rooms only ${mayImport.join(', ') || 'none'} (src/commands/${room}/README.md).`,
    from: { path: `^src/commands/${room}/` },
    to: { path: `^src/commands/(${others.join('|')})/` },
  };
}

/** A room of src/studio imports, of the other studio rooms, only those named. */
function studioRoom(room, mayImport, holds) {
  const others = STUDIO_ROOMS.filter((other) => other !== room && !mayImport.includes(other));
  return {
    name: `studio-${room}-room`,
    severity: 'error',
    comment: `studio/${room}/ (${holds}) imports of the other studio rooms only ${mayImport.join(', ')} (src/studio/${room}/README.md).`,
    from: { path: `^src/studio/${room}/` },
    to: { path: `^src/studio/(${others.join('|')})/` },
  };
}

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
    // gateway's contract (gateway/: types, errors, the catalog, deadlines, what a paid call needs and
    // writes into); images/, money/, answers/, files/ and requests/ build on it; client/ composes
    // them all at the top, and nothing below imports it.
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
        'gateway/ is the contract below the rooms that decode, store and build: it uses only common/, not even their types (src/core/gateway/README.md).',
      from: { path: '^src/core/gateway/' },
      to: { path: '^src/core/', pathNot: '^src/core/(gateway|common)/' },
    },
    {
      name: 'core-client-on-top',
      severity: 'error',
      comment: 'client/ composes every room of core; no room of core imports it (src/core/client/README.md).',
      from: { path: '^src/core/', pathNot: '^src/core/client/' },
      to: { path: '^src/core/client/' },
    },
    {
      name: 'core-images-room',
      severity: 'error',
      comment: "images/ uses only common/ and the contract's types and errors (src/core/images/README.md).",
      from: { path: '^src/core/images/' },
      to: { path: '^src/core/', pathNot: `^src/core/(images|common)/|^src/core/gateway/(types|errors)[.]ts$` },
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
        'answers/ uses common/, images/ and the contract (types, errors, deadline, paidCall, imageSink); never files/ or the client (src/core/answers/README.md).',
      from: { path: '^src/core/answers/' },
      to: {
        path: '^src/core/',
        pathNot: `^src/core/(answers|common|images)/|^src/core/gateway/(types|errors|deadline|paidCall|imageSink)[.]ts$`,
      },
    },
    {
      name: 'core-files-room',
      severity: 'error',
      comment: "files/ uses common/, images/, answers/ (kept and salvaged answers) and the contract's types, errors and image sink (src/core/files/README.md).",
      from: { path: '^src/core/files/' },
      to: { path: '^src/core/', pathNot: `^src/core/(files|common|answers|images)/|^src/core/gateway/(types|errors|imageSink)[.]ts$` },
    },
    // The rooms of src/commands (src/commands/README.md), from the bottom: common/, then styles/,
    // then images/ (generate, edit, compare), then prompt files, results and the account.
    {
      name: 'commands-in-rooms',
      severity: 'error',
      comment: 'Every command lives in a room of src/commands; a file directly in src/commands belongs in one (src/commands/README.md).',
      from: {},
      to: { path: '^src/commands/[^/]+$' },
    },
    commandsRoom('common', [], 'what every command uses: errors shown, arguments, output folders, cost confirmations'),
    commandsRoom('styles', ['common'], 'project and starter styles'),
    commandsRoom('images', ['common', 'styles'], 'generate, edit and compare, and the prompt written for a selection'),
    commandsRoom('promptFiles', ['common', 'styles', 'images'], 'Generate Images from File'),
    commandsRoom('results', ['common', 'styles'], 'results, provenance and recovery'),
    commandsRoom('account', ['common', 'images', 'results'], 'the key and the account page'),
    // The rooms of src/studio (src/studio/README.md), from the bottom: protocol/ (shared with the
    // webview app), model/ (what the panel shows), gallery/ and compare/, then panel/ on top.
    {
      name: 'studio-in-rooms',
      severity: 'error',
      comment: 'Every studio module lives in a room of src/studio (src/studio/README.md).',
      from: {},
      to: { path: '^src/studio/[^/]+$' },
    },
    {
      name: 'studio-protocol-room',
      severity: 'error',
      comment: 'protocol/ is shared with the webview app: it imports nothing of src but core/common, and never vscode (src/studio/protocol/README.md).',
      from: { path: '^src/studio/protocol/' },
      to: { path: '^(vscode$|src/)', pathNot: '^src/(studio/protocol|core/common)/' },
    },
    studioRoom('model', ['protocol'], 'what the panel shows, computed from the host'),
    studioRoom('gallery', ['protocol', 'model'], "the gallery's feed and actions"),
    studioRoom('compare', ['protocol', 'model'], 'the comparison grid'),
    studioRoom('region', ['protocol', 'model', 'gallery'], "the region editor's host side"),
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
    // esbuild.mjs: the resolver takes the package name 'esbuild' for this build script at the root (a
    // test that imports the package would otherwise show a circle of the script with itself).
    exclude: { path: '^(out|dist|[.]cache)/|^esbuild[.]mjs$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
