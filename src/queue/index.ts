// Placeholder for the `@platformui/sdk/queue` entry (issue 26) so the build and packaging have a file to point at.
// The queue's real entry (JobQueue, QueueWorker) replaces this file when its branch is merged.
export {};
