// The workflow every process test runs: LoadImage → ImageInvert → SaveImage, saved under a prefix of
// its own, so each job is told apart on the servers (and never served from an emulator's cache).
export const jobWorkflow = (prefix: string) => ({
  '1': { class_type: 'LoadImage', inputs: { image: 'in.png' } },
  '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
  '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: prefix } },
});
