/** The CSV export of a segment (or of every contact). */
import { useState } from 'react';
import { Button, buttonClass, Dialog, ErrorState, Select } from '../../components';
import { useSegments } from '../../lib/audience';

export function ExportDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const segments = useSegments();
  const [segmentId, setSegmentId] = useState('');
  const href = `/v1/contacts/export${segmentId ? `?segmentId=${encodeURIComponent(segmentId)}` : ''}`;
  return (
    <Dialog
      open={open}
      title="Export contacts as CSV"
      onClose={onClose}
      footer={
        <>
          <Button onClick={onClose}>Close</Button>
          <a className={buttonClass('primary')} href={href} download onClick={() => setTimeout(onClose, 300)}>
            Download CSV
          </a>
        </>
      }
    >
      <div className="stack">
        {segments.isError ? (
          <ErrorState error={segments.error} onRetry={() => void segments.refetch()} />
        ) : (
          <Select
            label="Contacts"
            value={segmentId}
            onChange={(e) => setSegmentId(e.target.value)}
            disabled={segments.isPending}
            options={[
              { value: '', label: 'Every contact' },
              ...(segments.data ?? []).map((s) => ({ value: s.id, label: `Segment: ${s.name}` })),
            ]}
            hint="The file streams as it is written: a large segment takes a while but never stops halfway."
            data-autofocus
          />
        )}
        <p className="muted small">
          Columns: id, email, firstName, lastName, status, suppressed, properties (as JSON), createdAt, updatedAt.
          Contacts of every status are included.
        </p>
      </div>
    </Dialog>
  );
}
