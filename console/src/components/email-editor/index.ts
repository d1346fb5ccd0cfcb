/**
 * The email block editor (contract §16, issue 31). Pages drop in `EmailContentEditor` (an email's content in the
 * visual editor or as HTML code), keep it saved with `useAutosave` and show its `SaveIndicator`; `newDocument`
 * starts a document (a new broadcast, template or automation step). Glossary: ./CONTEXT.md.
 */
import './email-editor.css';

export { EmailContentEditor, describePointer, useModeSwitch } from './EmailContentEditor';
export { useWorkspaceLook } from './workspace';
export type { EmailContentEditorProps, EmailContentValue } from './EmailContentEditor';
export { EmailEditor } from './EmailEditor';
export type { EmailEditorProps } from './EmailEditor';
export { SaveIndicator, saveErrorText, useAutosave } from './autosave';
export type { Autosave, SaveState, SaveStatus } from './autosave';
export { isBlockDocument } from './document';
export type { Block, BlockDocument, DocumentSettings, DocumentWarning } from './document';
export { forSaving, newDocument, normalise } from './operations';
