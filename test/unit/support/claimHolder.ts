// A process that claims a prompt file for a run and then hangs on to it until it is killed (a window
// whose extension host died mid-run): argv = [claims folder, prompt file]. The claim's stale time is
// 2 s (the least a lease takes), as the test that kills it uses.
import { PromptFileClaims } from '../../../src/jobs/promptFiles/promptFileClaim';

const [dir, file] = process.argv.slice(2);
void new PromptFileClaims(dir!, () => undefined, 2000).claim(file!, { window: 'a killed window', startedBy: 'ui' }).then(() => {
  process.send!('claimed');
  setInterval(() => undefined, 60_000);
});
