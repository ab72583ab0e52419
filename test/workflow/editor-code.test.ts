// The editor converter's two doors (issue 34): in Node `Workflow.fromEditor()` has it from the start; the browser
// build's twin (`editor-code.browser.ts`, swapped in by tsup.config.ts) has it only once loaded. The browser build
// itself is checked in Chromium (test/browser: fromEditor() before and after getObjectInfo()) and by lazy.test.ts.
import { describe, expect, it } from 'vitest';
import * as nodeDoor from '../../src/workflow/editor-code.ts';
import * as browserDoor from '../../src/workflow/editor-code.browser.ts';
import * as converter from '../../src/workflow/editor.ts';
import { PlatformUIError, Workflow } from '../../src/index.ts';

describe("the editor converter's door", () => {
  it('in Node: loaded from the start, and loadConverter() answers the same module', async () => {
    expect(nodeDoor.converterNow()).toBe(converter);
    expect(await nodeDoor.loadConverter()).toBe(converter);
    await expect(Workflow.loadEditor()).resolves.toBeUndefined();
  });

  it('in a browser: an error saying how to load it until loadConverter() has run, then the converter, loaded once', async () => {
    expect(() => browserDoor.converterNow()).toThrow(PlatformUIError);
    expect(() => browserDoor.converterNow()).toThrow('`await Workflow.loadEditor()` first');
    const [a, b] = await Promise.all([browserDoor.loadConverter(), browserDoor.loadConverter()]);
    expect(a).toBe(b);
    expect(typeof a.convertEditorWorkflow).toBe('function');
    expect(browserDoor.converterNow()).toBe(a);
  });
});
