// The chaos soak's world: the emulator, the real job service and account model composed as the
// extension composes them (src/services.ts), a key that can be switched, and the invariants checked
// against what the emulator recorded (charges, image hashes, request fingerprints).
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { AccountModel } from '../../../src/account/accountModel';
import type { GatewayClient } from '../../../src/core/client/client';
import type { RecoveryManifest } from '../../../src/core/files/recoveryManifest';
import type { ImageModel } from '../../../src/core/gateway/types';
import { ImageJobService } from '../../../src/jobs/imageJobs';
import type { EmulatorProcess } from './emulatorProcess';
import { newClient } from './gateway';

export const SOAK_KEYS = { plain: 'gw-soak-plain', budget: 'gw-soak-budget' } as const;

export interface SoakWorld {
  emu: EmulatorProcess;
  client: GatewayClient;
  account: AccountModel;
  service: ImageJobService;
  key: string;
  out: string;
  recovery: string;
  close(): Promise<void>;
}

/** The job service and account wired like src/services.ts, over a client whose key can change. */
export async function soakWorld(emu: EmulatorProcess, dir: string, models: ImageModel[]): Promise<SoakWorld> {
  await emu.call('addKey', SOAK_KEYS.plain, 'unlimited');
  await emu.call('addKey', SOAK_KEYS.budget, 'budget');
  await emu.call('setKeyBudget', SOAK_KEYS.budget, 500_000);
  const world = { emu, key: SOAK_KEYS.plain, out: path.join(dir, 'workspace'), recovery: path.join(dir, 'global-storage', 'recovery') } as SoakWorld;
  // Paid requests wait for the slowest fault (slow-headers at 400 ms), never for minutes.
  world.client = newClient(emu, null, { getApiKey: () => world.key, paidTimeoutMs: 30_000 });
  world.account = new AccountModel(async () => world.client);
  world.service = new ImageJobService({
    api: async () => world.client,
    models: async () => models,
    funds: () => ({ balance: world.account.snapshot.balance, budget: world.account.snapshot.budget }),
    applyUsage: (usage) => world.account.applyUsage(usage),
    // As the extension, a little later; short so that the soak does not wait 1.5 s at the end.
    reconcile: () => world.account.reconcileSoon(RECONCILE_MS),
    confirm: async () => true,
    confirmAbove: () => Number.POSITIVE_INFINITY,
    recoveryDir: world.recovery,
    locale: 'en',
  });
  world.close = async () => {
    world.account.dispose();
    await world.client.close();
  };
  await world.account.refresh();
  return world;
}

export const RECONCILE_MS = 100;

export const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Every file under `dir` (absolute paths); [] when it does not exist. */
export async function filesUnder(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { recursive: true, withFileTypes: true });
    return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath ?? (e as unknown as { path: string }).path, e.name));
  } catch {
    return [];
  }
}

export interface InvariantFigures {
  paidRequests: number;
  charged: number;
  chargedImages: number;
  deliveredImages: number;
  /**
   * Charged and written out, but the job had been cancelled before any image arrived (the cancel
   * crossed the gateway's answer): the extension said the outcome is unknown and reconciled.
   */
  deliveredToGoneClient: number;
  savedOrRecovered: number;
  missing: string[];
  duplicateSends: number;
  leftovers: string[];
  orphanStaged: string[];
}

/** Checks the money invariants against the emulator's own record. */
export async function checkInvariants(world: SoakWorld, cancelledBeforeAnswer: ReadonlySet<string>): Promise<InvariantFigures> {
  const paid = (await world.emu.get('requests')).filter((r) => r.paid);
  const onDisk = new Map<string, number>();
  const files = [...(await filesUnder(world.out)), ...(await filesUnder(world.recovery))];
  for (const file of files.filter((f) => !f.endsWith('.json') && !f.endsWith('.part'))) {
    const hash = sha256(await readFile(file));
    onDisk.set(hash, (onDisk.get(hash) ?? 0) + 1);
  }
  const figures: InvariantFigures = {
    paidRequests: paid.length,
    charged: paid.filter((r) => r.chargedRub > 0).length,
    chargedImages: 0,
    deliveredImages: 0,
    deliveredToGoneClient: 0,
    savedOrRecovered: 0,
    missing: [],
    duplicateSends: 0,
    leftovers: files.filter((f) => f.endsWith('.part')),
    orphanStaged: [],
  };
  for (const request of paid.filter((r) => r.chargedRub > 0)) {
    for (const image of request.images ?? []) {
      figures.chargedImages++;
      if (!image.delivered) continue;
      figures.deliveredImages++;
      const left = onDisk.get(image.sha256) ?? 0;
      if (left > 0) {
        onDisk.set(image.sha256, left - 1);
        figures.savedOrRecovered++;
      } else if (cancelledBeforeAnswer.has(request.prompt ?? '')) {
        // Cancelled before the answer's headers: the connection was closed while the gateway was
        // still working; the job told "outcome unknown" and the account reconciles the charge.
        figures.deliveredToGoneClient++;
      } else {
        figures.missing.push(
          `${request.id} image ${image.index + 1} of ${request.images!.length} (${image.sha256.slice(0, 12)}; status ${request.status}${request.faults.length ? `, faults ${request.faults.join('+')}` : ''})`,
        );
      }
    }
  }
  const byFingerprint = new Map<string, number>();
  for (const r of paid) if (r.fingerprint) byFingerprint.set(r.fingerprint, (byFingerprint.get(r.fingerprint) ?? 0) + 1);
  figures.duplicateSends = [...byFingerprint.values()].reduce((sum, n) => sum + Math.max(0, n - 1), 0);
  // Staged images in the recovery folder are only there with a manifest that lists them.
  const listed = new Set<string>();
  for (const manifest of files.filter((f) => f.startsWith(world.recovery) && f.endsWith('.json') && !/-answer\.json$/.test(f))) {
    // (`<job>-answer.json` is an unreadable paid answer kept as it came, not a manifest.)
    for (const entry of (JSON.parse(await readFile(manifest, 'utf8')) as RecoveryManifest).files) listed.add(entry.path);
  }
  figures.orphanStaged = files.filter((f) => f.startsWith(world.recovery) && f.endsWith('.img') && !listed.has(f));
  return figures;
}
