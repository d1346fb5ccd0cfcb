// The Mail setup context's face (docs/architecture.md): sending domains and their signing keys, templates, and the DMARC
// reports receivers send about the domains. Reads only, but for recording DMARC reports (the inbound listener's).
export {
  findDomainByName,
  domainStatusByName,
  firstVerifiedDomain,
  getSigningKey,
  verifiedDomainHolders,
  type DomainHolder,
  type SigningKey,
} from './domains/domains.repository.js';
export { type DomainsService } from './domains/domains.service.js';
export { findTemplateByIdOrAlias, getTemplate, templateExists } from './templates/templates.repository.js';
export { recordDmarcReports, type DmarcAttachment, type DmarcIntake } from './dmarc/dmarc.service.js';
