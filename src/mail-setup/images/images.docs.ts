import type { OperationDocs } from '../../http/operation-docs.js';

const image = {
  id: 'img_01JDB44V8Z0B2D4F6H8K0M2P4R',
  url: 'https://news.example.com/i/img_01JDB44V8Z0B2D4F6H8K0M2P4R.jpg',
  contentType: 'image/jpeg',
  width: 1200,
  height: 800,
  bytes: 184320,
  name: 'team-offsite.jpg',
  createdAt: '2026-11-21T10:00:00.000Z',
};

const tags = ['images'];

export const imagesDocs: OperationDocs = {
  'POST /v1/images': {
    tags,
    summary: 'Upload an image',
    description:
      "Uploads an image for emails (the editor's image blocks use its `url`), as `multipart/form-data` with the file in the field `file` (`curl -F file=@photo.jpg`). PNG, JPEG, GIF or WebP, at most 5 MiB (a larger file is 413 payload_too_large and nothing is stored). The type is read from the bytes: anything else (an SVG, a PDF, text, a truncated or corrupt image) is 422 `unsupported_media_type`. The file's name and declared type are not trusted: a PNG named `photo.jpg` (or sent as `image/jpeg`) is stored as the PNG it is (`contentType` `image/png`, a `.png` URL), an SVG named `logo.png` is refused. An image wider than 1200 px is resized to 1200 px wide; it is turned upright by its EXIF orientation, and its metadata (EXIF with a GPS position, XMP, IPTC, comments) is removed, re-encoding it in its own format; an animated GIF is kept as it is. Answers 201 with the image and its `Location`; uploading the same image again to the workspace answers 201 too, with the one stored already (same id), and stores nothing. The `url` is public (no key), under PUBLIC_URL. Needs `write:broadcasts`.",
    response: image,
  },
  'GET /v1/images': {
    tags,
    summary: 'List images',
    description:
      "The workspace's images, newest first, with cursor pagination (`limit`, `cursor`): the image library. Needs `read:broadcasts`.",
    response: { data: [image], nextCursor: null },
  },
  'GET /v1/images/{imageId}': {
    tags,
    summary: 'Get an image',
    description: "One image's details (not its bytes: those are at its public `url`). Needs `read:broadcasts`.",
    response: image,
  },
  'DELETE /v1/images/{imageId}': {
    tags,
    summary: 'Delete an image',
    description:
      'Deletes the image: from now on its public `url` answers 404, also in emails already sent that show it (they show a broken image, or its alt text). Answers 204. Needs `write:broadcasts`.',
  },
  'GET /i/{file}': {
    tags: ['public'],
    summary: 'An image',
    description:
      "The public address of an uploaded image, `/i/{id}.{ext}` (or `/i/{id}`), what emails show. No API key: anyone with the address sees the image. Answers its bytes with their type, `Cache-Control: public, max-age=31536000, immutable` (an image never changes: another upload is another id), `X-Content-Type-Options: nosniff` and an `ETag` (304 to a matching `If-None-Match`). An unknown or deleted image, or an extension that is not the image's own, is 404.",
    responses: {
      200: {
        description: 'The image (image/png, image/jpeg, image/gif or image/webp); the example is a 1×1 PNG in base64.',
        contentType: 'image/png',
        example: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
      },
      304: { description: "Not modified: the client's copy (`If-None-Match`) is current." },
      404: {
        description: 'No such image: a page.',
        example: '<h1>Image not found</h1><p>This image does not exist, or it was deleted.</p>',
      },
    },
  },
};
