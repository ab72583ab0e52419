// Paid work runs at most once: what a user sees when the answer to a submission is
// lost. The SDK chooses the job's id before sending, so it can look the job up
// instead of sending it again. Against the emulator, which here plays a network that
// loses answers (`faults.loseAnswerNext`) and requests (`faults.dropNext`).
import { APIConnectionError, CloudClient } from '@platformui/sdk';
import { makePng, startEmulator } from '@platformui/sdk/emulator';

const emulator = await startEmulator({ personality: 'local', cloud: { stepMs: 20 } });
const cloud = new CloudClient({ baseUrl: emulator.url });
const { name: image } = await cloud.uploadImage(makePng(32, 32, 7), { filename: 'photo.png' });
const workflow = (prefix: string) => ({
  '1': { class_type: 'LoadImage', inputs: { image } },
  '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
  '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: prefix } },
});

try {
  // 1. The server takes the job, and its answer is lost on the way back.
  emulator.faults.loseAnswerNext({ method: 'POST', path: '/api/prompt' });
  const result = await cloud.run(workflow('lost-answer'), { onSubmitted: (id) => console.log(`Submitted job ${id} (its answer was lost; found by id)`) });
  console.log(`Job ${result.promptId} completed: ${result.files.map((f) => f.filename).join(', ')}`);
  console.log(`The server took it ${emulator.cloud.engine.submissions.get(result.promptId)} time(s)`);

  // 2. The request itself is lost: the job is looked up, not found, and never sent again.
  // The SDK warns about it on stderr (its default log level), as it would in production: said first,
  // so that the `[platformui] … may exist` line reads as the expected outcome it is here.
  console.log('Next, a lost request: expect one [platformui] warning that the job may exist');
  emulator.faults.dropNext({ method: 'POST', path: '/api/prompt' });
  try {
    await cloud.run(workflow('lost-request'), { confirmWithin: 1000 });
  } catch (err) {
    if (!(err instanceof APIConnectionError) || err.sent !== 'maybe') throw err;
    // Record err.promptId: follow it later with cloud.follow(id), or stop it with cloud.stopJob(id).
    console.log(`Not confirmed: job ${err.promptId} may exist (sent: ${err.sent}); it was not sent twice`);
  }
} finally {
  cloud.close();
  await emulator.close();
}
