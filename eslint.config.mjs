// ESLint flat config: typescript-eslint's type-checked recommended rules for the extension host
// (src/), the webview (media/) and the tests (test/, tools/); plain JavaScript rules for the node
// scripts. Formatting is prettier's job (.prettierrc.json), so there are no stylistic rules here.
// A rule switched off or loosened below carries its reason on the same line.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** What matters most in an extension host and a webview: promises nobody awaits, and types. */
const typedRules = {
  '@typescript-eslint/no-floating-promises': 'error',
  '@typescript-eslint/no-misused-promises': 'error',
  '@typescript-eslint/consistent-type-imports': ['error', { prefer: 'type-imports', fixStyle: 'inline-type-imports' }],
  '@typescript-eslint/no-explicit-any': 'error',
  // Passing another promise's rejection reason on unchanged (typed `unknown`) is allowed; new rejections must be Errors.
  '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
  // `_name` marks a parameter an interface or callback signature requires but this body does not use.
  '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
};

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'node_modules/**', '.cache/**', '.vscode-test/**', 'test-results/**', 'test/fixtures/**'] },

  // The extension host: one TypeScript program with the tests (tsconfig.json).
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'tools/**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname } },
    rules: typedRules,
  },

  // The webview: its own program (tsconfig.webview.json: DOM, no node types).
  {
    files: ['media/**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { project: './tsconfig.webview.json', tsconfigRootDir: import.meta.dirname } },
    rules: typedRules,
  },

  // Tests and tools: still type-checked, with these rules lighter.
  {
    files: ['test/**/*.ts', 'tools/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off', // tests read parsed JSON (bodies, manifests, logs) and assert on its shape; a wrong shape fails the assertion.
      '@typescript-eslint/no-unsafe-assignment': 'off', // same reason: values taken out of parsed JSON are checked by the assertions that follow.
      '@typescript-eslint/no-unsafe-argument': 'off', // same reason: parsed JSON passed straight into assert.* calls.
      '@typescript-eslint/no-unsafe-call': 'off', // same reason: tests call through untyped JSON and module handles they load dynamically.
      '@typescript-eslint/no-unsafe-return': 'off', // same reason: helpers that return parsed JSON to the assertion.
      '@typescript-eslint/no-explicit-any': 'off', // tests feed deliberately malformed input and reach private members; the product code keeps the rule.
      '@typescript-eslint/require-await': 'off', // fakes implement async interfaces with synchronous bodies; `async` keeps a throw a rejection, as in the real thing.
    },
  },

  // Node scripts (ES modules): plain JavaScript, in no TypeScript program, so no type-aware rules.
  {
    files: ['scripts/**/*.mjs', 'test/**/*.mjs', '*.mjs'],
    extends: [js.configs.recommended],
    languageOptions: { globals: globals.node },
  },

  // Node scripts that a require hook loads (CommonJS): the same, with CommonJS's globals.
  {
    files: ['scripts/**/*.cjs'],
    extends: [js.configs.recommended],
    languageOptions: { sourceType: 'commonjs', globals: globals.node },
  },
);
