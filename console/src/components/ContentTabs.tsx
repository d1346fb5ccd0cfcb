/** An email's content with an HTML / Plain text switch: the HTML in a sandboxed iframe (EmailPreview), the text as is. */
import { useState } from 'react';
import { EmailPreview } from './EmailPreview';
import { Tabs } from './Tabs';

export function ContentTabs({
  html,
  text,
  title,
  label,
  noHtml = 'No HTML: recipients get the text part.',
  textClassName = 'text-preview',
  initial = 'html',
}: {
  html: string | null | undefined;
  text: string | null | undefined;
  /** The iframe's title. */
  title: string;
  /** The tab list's name. */
  label: string;
  noHtml?: string;
  textClassName?: string;
  /** The tab shown first. */
  initial?: 'html' | 'text';
}) {
  const [view, setView] = useState<string>(initial);
  return (
    <Tabs
      label={label}
      tabs={[
        { id: 'html', label: 'HTML' },
        { id: 'text', label: 'Plain text' },
      ]}
      selected={view}
      onSelect={setView}
    >
      {view === 'html' ? (
        html ? (
          <EmailPreview html={html} title={title} />
        ) : (
          <p className="muted">{noHtml}</p>
        )
      ) : (
        <pre className={textClassName}>{text ?? ''}</pre>
      )}
    </Tabs>
  );
}
