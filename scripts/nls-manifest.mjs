#!/usr/bin/env node
// Moves the user-facing strings of package.json into package.nls.json as `%key%` references,
// so that package.nls.ru.json (and any other language) can translate them. Idempotent: strings
// that are already `%key%` are left alone, so it can run after every new command or setting.
//
//   node scripts/nls-manifest.mjs           convert plain strings, prune unused keys, report
//   node scripts/nls-manifest.mjs --check   change nothing; exit 1 if a string is plain, a
//                                           `%key%` has no English text, or Russian lacks a key
//
// Keys come from where the string lives: command.<id>.title, config.<setting>.markdownDescription,
// walkthrough.<id>.<step>.description… (the `gatewayImages.` prefix is dropped).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const FILES = {
  manifest: path.join(ROOT, 'package.json'),
  en: path.join(ROOT, 'package.nls.json'),
  ru: path.join(ROOT, 'package.nls.ru.json'),
};
const REF = /^%([^%\s]+)%$/;

const short = (id) =>
  String(id)
    .replace(/^gatewayImages\./, '')
    .replace(/^gateway-images\./, '');
const keyPart = (text) => String(text).replace(/[^A-Za-z0-9_-]+/g, '_');

/** Every translatable string slot of the manifest: { holder, prop, key }. */
export function translatableSlots(pkg) {
  const slots = [];
  const add = (holder, prop, key) => {
    if (holder && typeof holder[prop] === 'string') slots.push({ holder, prop, key });
  };
  add(pkg, 'description', 'extension.description');
  add(pkg.capabilities?.untrustedWorkspaces, 'description', 'capabilities.untrustedWorkspaces.description');
  add(pkg.capabilities?.virtualWorkspaces, 'description', 'capabilities.virtualWorkspaces.description');
  const c = pkg.contributes ?? {};

  for (const cmd of arr(c.commands)) {
    const id = short(cmd.command);
    add(cmd, 'title', `command.${id}.title`);
    add(cmd, 'shortTitle', `command.${id}.shortTitle`);
    // One shared key for the usual category; another category gets its own key.
    add(cmd, 'category', 'command.category');
  }

  const configs = Array.isArray(c.configuration) ? c.configuration : c.configuration ? [c.configuration] : [];
  configs.forEach((config, i) => {
    add(config, 'title', configs.length > 1 ? `config.${i}.title` : 'config.title');
    for (const [name, prop] of Object.entries(config.properties ?? {})) {
      const id = short(name);
      for (const field of ['description', 'markdownDescription', 'deprecationMessage', 'markdownDeprecationMessage']) {
        add(prop, field, `config.${id}.${field}`);
      }
      for (const field of ['enumDescriptions', 'markdownEnumDescriptions', 'enumItemLabels']) {
        arr(prop[field]).forEach((_, j) => add(prop[field], j, `config.${id}.${field}.${keyPart(prop.enum?.[j] ?? j)}`));
      }
    }
  });

  for (const submenu of arr(c.submenus)) add(submenu, 'label', `submenu.${short(submenu.id)}.label`);
  for (const [where, list] of Object.entries(c.viewsContainers ?? {})) {
    for (const container of arr(list)) add(container, 'title', `viewContainer.${where}.${short(container.id)}.title`);
  }
  for (const list of Object.values(c.views ?? {})) {
    for (const view of arr(list)) {
      add(view, 'name', `view.${short(view.id)}.name`);
      add(view, 'contextualTitle', `view.${short(view.id)}.contextualTitle`);
    }
  }
  arr(c.viewsWelcome).forEach((welcome, i) => add(welcome, 'contents', `viewsWelcome.${short(welcome.view)}.${i}`));

  for (const walkthrough of arr(c.walkthroughs)) {
    const w = `walkthrough.${short(walkthrough.id)}`;
    add(walkthrough, 'title', `${w}.title`);
    add(walkthrough, 'description', `${w}.description`);
    for (const step of arr(walkthrough.steps)) {
      const s = `${w}.${short(step.id)}`;
      add(step, 'title', `${s}.title`);
      add(step, 'description', `${s}.description`);
      add(step.media, 'altText', `${s}.altText`);
    }
  }

  for (const participant of arr(c.chatParticipants)) {
    const p = `chat.${short(participant.id)}`;
    add(participant, 'fullName', `${p}.fullName`);
    add(participant, 'description', `${p}.description`);
    for (const command of arr(participant.commands)) add(command, 'description', `${p}.command.${keyPart(command.name)}.description`);
    arr(participant.disambiguation).forEach((d, i) => add(d, 'description', `${p}.disambiguation.${keyPart(d.category ?? i)}.description`));
  }
  for (const tool of arr(c.languageModelTools)) {
    const t = `tool.${short(tool.name)}`;
    add(tool, 'displayName', `${t}.displayName`);
    add(tool, 'userDescription', `${t}.userDescription`);
    // modelDescription is written for the model and stays English.
  }
  for (const task of arr(c.taskDefinitions)) {
    for (const [name, prop] of Object.entries(task.properties ?? {})) add(prop, 'description', `task.${keyPart(task.type)}.${keyPart(name)}.description`);
  }
  return slots;
}

function arr(value) {
  return Array.isArray(value) ? value : [];
}

/** Every `%key%` referenced anywhere in the manifest. */
export function referencedKeys(value, found = new Set()) {
  if (typeof value === 'string') {
    const m = REF.exec(value);
    if (m) found.add(m[1]);
  } else if (Array.isArray(value)) value.forEach((v) => referencedKeys(v, found));
  else if (value && typeof value === 'object') Object.values(value).forEach((v) => referencedKeys(v, found));
  return found;
}

/** Converts plain strings to `%key%`; returns what changed. Mutates pkg and en. */
export function convert(pkg, en) {
  const added = [];
  const changed = [];
  for (const { holder, prop, key: preferred } of translatableSlots(pkg)) {
    const text = holder[prop];
    if (REF.test(text)) continue;
    let key = preferred;
    if (key === 'command.category' && key in en && en[key] !== text) key = `command.${short(holder.command)}.category`;
    if (key in en && en[key] !== text) changed.push(key);
    else if (!(key in en)) added.push(key);
    en[key] = text;
    holder[prop] = `%${key}%`;
  }
  return { added, changed };
}

function readJson(file, fallback) {
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : fallback;
}

function sortKeys(object) {
  return Object.fromEntries(
    Object.keys(object)
      .sort()
      .map((k) => [k, object[k]]),
  );
}

const write = (file, value) => writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);

const isMain = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const check = process.argv.includes('--check');
  const pkg = readJson(FILES.manifest);
  const en = readJson(FILES.en, {});
  const ru = readJson(FILES.ru, {});
  const { added, changed } = convert(pkg, en);
  const used = referencedKeys(pkg);
  const unused = Object.keys(en).filter((k) => !used.has(k));
  const undefinedKeys = [...used].filter((k) => !(k in en));
  const untranslated = [...used].filter((k) => k in en && !(typeof ru[k] === 'string' && ru[k].trim()));
  if (check) {
    const problems = [
      ...added.map((k) => `plain string in package.json (would become %${k}%)`),
      ...changed.map((k) => `plain string in package.json changes the English text of ${k}`),
      ...undefinedKeys.map((k) => `%${k}% has no text in package.nls.json`),
      ...untranslated.map((k) => `${k} has no Russian text in package.nls.ru.json`),
      ...unused.map((k) => `${k} in package.nls.json is not used`),
    ];
    for (const p of problems) console.error(p);
    process.exitCode = problems.length ? 1 : 0;
  } else {
    for (const k of unused) {
      delete en[k];
      delete ru[k];
    }
    if (added.length || changed.length) write(FILES.manifest, pkg);
    write(FILES.en, sortKeys(en));
    if (unused.length) write(FILES.ru, sortKeys(ru));
    console.log(`package.nls.json: ${Object.keys(en).length} keys (+${added.length}, changed ${changed.length}, pruned ${unused.length})`);
    for (const k of added) console.log(`  + ${k}: ${en[k]}`);
    for (const k of changed) console.log(`  ~ ${k}: ${en[k]}   (update the Russian text)`);
    for (const k of unused) console.log(`  - ${k}`);
    for (const k of undefinedKeys) console.error(`warning: %${k}% has no text in package.nls.json`);
    for (const k of untranslated.filter((k) => !added.includes(k))) console.error(`to translate: ${k}`);
    if (added.length) console.error(`to translate: ${added.length} new key(s) in package.nls.ru.json`);
  }
}
