/**
 * Templates, the starter gallery, document previews and images (contract §8, §16), for the Templates and Images pages
 * and the components other pages reuse (TemplateGallery, SaveAsTemplate).
 */
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { documentKeys, templateKeys } from '../api/keys';
import type { paths } from '../api/generated/schema';

/** A template (§8) with the block document it was made from, if any (§16). */
export type Template = paths['/v1/templates/{templateId}']['get']['responses'][200]['content']['application/json'];

type RenderBody = NonNullable<
  paths['/v1/email-documents/render']['post']['requestBody']
>['content']['application/json'];

/**
 * What an email is made of, wherever it is stored: a broadcast's `emailContent`, a template, an automation's send
 * step. A block document in `editorContent` makes the service render `html` and `text` from it on every write.
 */
export interface EmailContent {
  subject: string | null;
  previewText?: string | null;
  html: string | null;
  text: string | null;
  editorContent: unknown;
}

/** A starter document of GET /v1/templates/gallery. */
export type GalleryItem =
  paths['/v1/templates/gallery']['get']['responses'][200]['content']['application/json']['data'][number];

export type RenderedDocument =
  paths['/v1/email-documents/render']['post']['responses'][200]['content']['application/json'];

/** An image of the workspace's library (POST/GET /v1/images). */
export type LibraryImage = paths['/v1/images/{imageId}']['get']['responses'][200]['content']['application/json'];

/** Whether `editorContent` is a block document of the visual editor (`type: "formcast/blocks"`). */
export function isBlockDocument(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'formcast/blocks';
}

/** The content of a stored template, as an email's content. */
export function contentOf(t: Template): EmailContent {
  return { subject: t.subject, html: t.html, text: t.text, editorContent: t.editorContent ?? null };
}

/** The starter documents (they change only with the service's version). */
export function useGallery() {
  return useQuery({
    queryKey: templateKeys.gallery(),
    queryFn: async () => unwrap(await api.GET('/v1/templates/gallery')).data,
    staleTime: Infinity,
  });
}

/** A block document rendered for a preview (sample data, nothing saved); `key` names what it is a preview of. */
export function useRenderedDocument(key: string, editorContent: unknown, enabled = true) {
  return useQuery({
    queryKey: documentKeys.render(key),
    queryFn: async () =>
      unwrap(
        await api.POST('/v1/email-documents/render', {
          // Only a block document gets here (enabled below); the service checks it.
          body: { editorContent: editorContent as RenderBody['editorContent'] },
        }),
      ),
    enabled: enabled && isBlockDocument(editorContent),
    staleTime: Infinity,
  });
}

/** "245 KB", "1.2 MB". */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${Math.round(n / 1024)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}
