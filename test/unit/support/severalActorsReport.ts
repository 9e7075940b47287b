// The figures of the several-actors soak (test/unit/severalActors.test.ts), printed with the seed.
import { moneyTold } from '../../../src/core/gateway/moneyTold';
import type { PersonOutcome } from './severalActors';
import type { SoakFigures } from './severalActorsFigures';

export interface ReportExtras {
  seed: number;
  sessionCap: number;
  agentCallsAtOnce: number;
  seconds: number;
  outcomes: PersonOutcome[];
  lines: { status: string }[];
  refused: number;
  refusal?: string;
  topUps: number[];
  accountBalance?: number;
  leftovers: string[];
  compactionLosses: string[];
  lost: number;
  paused: string[];
}

/** The figures as the soak prints them (the lead copies them into the closing note), with the seed that replays the plan. */
export function soakReport(f: SoakFigures, x: ReportExtras): string {
  const tally = (items: string[]) =>
    Object.entries(items.reduce<Record<string, number>>((t, k) => ({ ...t, [k]: (t[k] ?? 0) + 1 }), {}))
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  const person = x.outcomes;
  const told = person.flatMap((o) => (o.error ? [moneyTold(o.error) === 'the message' ? `"${o.error.kind}" message` : moneyTold(o.error)] : []));
  const r = f.requests;
  return [
    `      soak with several actors: seed ${x.seed} (GATEWAY_IMAGES_SOAK_SEED=${x.seed} replays its plan), ${x.seconds.toFixed(1)} s`,
    `      person: ${person.length} jobs (${person.filter((o) => o.result).length} ok, ${person.filter((o) => o.error).length} failed); cancels: ${tally(person.flatMap((o) => (o.cancelled ? [o.cancelled] : []))) || 'none'}; told: ${tally(told) || 'nothing'}`,
    `      prompt file (${x.lines.length} lines, started twice at once): ${x.refused} start refused${x.refusal ? ` (${/ in this or another window\./.test(x.refusal) ? 'without naming the run: its owner record was not written yet' : 'naming the run'})` : ''}; lines of the run that got the claim: ${tally(x.lines.map((l) => l.status))}`,
    ...x.paused,
    `      agent: ${f.agent.calls} generate_image calls, ${x.agentCallsAtOnce} at a time, under a session cap of ${x.sessionCap}; refused by the session cap: ${f.agent.refused ? 'yes' : 'no'}`,
    `      gateway: reached/charged/returned: person ${r.person.reached}/${r.person.charged}/${r.person.returned}, file ${r.file.reached}/${r.file.charged}/${r.file.returned}, agent ${r.agent.reached}/${r.agent.charged}/${r.agent.returned}; uploads cut before it read them: ${f.cutUploads}; top-ups from outside: ${x.topUps.length} (${x.topUps.join(' + ') || '0'} RUB)`,
    `      paid twice: ${f.paidTwice.length} (sent twice: ${f.sentTwice.length}; fingerprints: ${f.fingerprints.file} lines, ${f.fingerprints.person} person jobs)`,
    `      results lost: ${x.lost} (${x.compactionLosses.length} to the paused compaction; ${f.keptImages} of ${f.deliveredImages} delivered paid images on disk byte-equal, ${f.deliveredToGoneClient} sent to a job cancelled before its answer and told "may have been charged"; ${x.leftovers.length} partial files)`,
    `      false "nothing was charged": ${f.falseNothingCharged.length} of ${f.claims} such messages; failures held by the gateway but not told of a possible charge: ${f.untold.length}`,
    `      session cap: ${f.agent.charged} charged by the gateway (at most ${f.agent.peak} charged and held at one moment), ${f.agent.spentByServer} counted by the server, of ${x.sessionCap} (least left shown: ${f.agent.minRemaining}); over the cap: ${f.agent.overCap.length}`,
    `      balance: account model after a refresh ${x.accountBalance} / emulator ${f.ledger.emulator} / initial + top-ups − charges ${f.ledger.expected}`,
    `      journals: ${f.journal.entries} entries (${f.journal.byPerson} by the person's windows, ${f.journal.byFile} by the prompt file's runs) = ${f.journal.results} results + ${f.journal.paidFailures} paid failures + ${f.journal.unknown} unknown outcomes; mismatches with the gateway's paid requests: ${f.journal.mismatches.length}`,
    `      outcome checks after the deadline: ${f.outcomeChecks.checked} of ${f.outcomeChecks.unknown} unknown outcomes checked, ${f.outcomeChecks.chargeSeen} "charge-seen" (${f.outcomeChecks.chargeSeenUncharged} of them for a request the gateway did not charge: other actors move the key's spend)`,
  ].join('\n');
}
