// Entry of the lazily loaded chunk (dist/styles.js): reading and resolving project styles, their
// schema and "Save as Style…" load on first use, not at activation. The reading of hand-written
// JSON (jsonc-parser) comes with it: the settings check (host/ignoredSettings.ts) uses it too.
export { parseJsonc, setsSetting } from '../core/common/jsonc';
export { parseStyles, readStyles, resolveStyle, styleNames, withStyle } from '../core/requests/styleFile';
export { stylesSchema } from '../core/requests/styleSchema';
export { resolveStyledRequest } from './styledRequest';
export { isStarterSource, starterSource, starterStyles } from '../core/requests/starterStyles';
export { asksStyleFirst, optionsAfterStyleChange, preselectedStyle, stylesForModel, stylesOnOffer } from '../core/requests/styleOffer';
