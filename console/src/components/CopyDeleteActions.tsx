/**
 * "Duplicate" and "Delete" for one form or broadcast, on its list row and its page. Delete asks first; where the API
 * refuses it (only a DRAFT can be deleted), the button stays visible but marked unavailable, its tooltip says why,
 * and pressing it explains what to do instead.
 */
import { useState, type ReactNode } from 'react';
import { Button } from './Button';
import { ConfirmDialog, Dialog } from './Dialog';

export function CopyDeleteActions({
  kind,
  name,
  size = 'md',
  whyNot,
  explanation,
  deleteNote,
  onDuplicate,
  duplicating,
  onDelete,
  deleting,
}: {
  /** "form", "broadcast". */
  kind: string;
  name: string;
  size?: 'sm' | 'md';
  /** Why it cannot be deleted (the tooltip); null when it can. */
  whyNot: string | null;
  /** What to do instead, shown when the unavailable Delete is pressed. */
  explanation?: ReactNode;
  /** What deleting does, in the confirmation. */
  deleteNote: ReactNode;
  onDuplicate: () => void;
  duplicating: boolean;
  onDelete: () => void;
  deleting: boolean;
}) {
  const [asking, setAsking] = useState(false);
  return (
    <div className="row actions-row">
      <Button size={size} onClick={onDuplicate} loading={duplicating} aria-label={`Duplicate ${kind} ${name}`}>
        Duplicate
      </Button>
      <Button
        size={size}
        variant={whyNot ? 'secondary' : 'danger'}
        aria-disabled={whyNot ? true : undefined}
        title={whyNot ? whyNot.charAt(0).toUpperCase() + whyNot.slice(1) : undefined}
        onClick={() => setAsking(true)}
        aria-label={`Delete ${kind} ${name}`}
      >
        Delete
      </Button>
      {whyNot ? (
        <Dialog
          open={asking}
          title={`This ${kind} cannot be deleted`}
          onClose={() => setAsking(false)}
          footer={
            <Button variant="primary" onClick={() => setAsking(false)} data-autofocus>
              OK
            </Button>
          }
        >
          <p className="break">
            <strong>{name}</strong>: {whyNot}
          </p>
          {explanation && <p>{explanation}</p>}
        </Dialog>
      ) : (
        <ConfirmDialog
          open={asking}
          title={`Delete this ${kind}?`}
          confirmLabel={`Delete ${kind}`}
          danger
          busy={deleting}
          onClose={() => setAsking(false)}
          onConfirm={onDelete}
        >
          <p className="break">
            <strong>{name}</strong>
          </p>
          <p>{deleteNote} This cannot be undone.</p>
        </ConfirmDialog>
      )}
    </div>
  );
}
