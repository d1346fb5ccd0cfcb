// The Mail setup context's face (docs/architecture.md): sending domains and their signing keys, templates. Reads only.
export { findDomainByName, firstVerifiedDomain, getSigningKey, type SigningKey } from './domains/domains.repository.js';
export { type DomainsService } from './domains/domains.service.js';
export { getTemplate, templateExists } from './templates/templates.repository.js';
