/** The published form as visitors get it: its hosted page and the embed snippets. */
import { useState } from 'react';
import { Button, CopyButton, CopyField, EmptyState } from '../../components';
import type { Form } from '../Forms/form';

export function PreviewTab({ form }: { form: Form }) {
  const [reload, setReload] = useState(0);
  if (form.status !== 'PUBLISHED' || !form.slug) {
    return (
      <div className="card">
        <EmptyState title="Publish the form to preview its hosted page">
          {form.slug
            ? 'Only the published version is served at its address.'
            : 'Give the form a slug (Details tab), then publish it.'}
        </EmptyState>
      </div>
    );
  }
  const pageUrl = `${location.origin}/f/${form.slug}`;
  const snippet = `<script src="${pageUrl}/embed.js" async></script>`;
  return (
    <div className="grid-2">
      <section className="card stack-sm">
        <div className="card-header">
          <h2>Hosted page</h2>
          <div className="row">
            <Button size="sm" onClick={() => setReload((n) => n + 1)}>
              Reload
            </Button>
            <a className="btn btn-sm" href={pageUrl} target="_blank" rel="noopener">
              Open in a new tab<span className="visually-hidden"> (opens a new tab)</span>
            </a>
          </div>
        </div>
        <iframe
          key={reload}
          className="preview-frame"
          title={`Preview of ${form.name}`}
          src={`/f/${form.slug}?preview=1`}
          sandbox=""
        />
      </section>
      <section className="card stack">
        <h2>Share and embed</h2>
        <div className="stack-sm">
          <span className="cell-main">Page address</span>
          <CopyField value={pageUrl} what="page address" />
        </div>
        <div className="stack-sm">
          <span className="cell-main">Embed on your site</span>
          <p className="muted small">
            Paste where the form should appear
            {form.display === 'POPUP'
              ? ' (it opens as a popup; add data-formcast-open to a button to open it on click)'
              : ''}
            .
          </p>
          <pre className="card mono small">{snippet}</pre>
          <div>
            <CopyButton text={snippet} label="Copy snippet" />
          </div>
        </div>
      </section>
    </div>
  );
}
