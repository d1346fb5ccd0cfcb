/** The languages of the footer of broadcasts and of the public pages (unsubscribe, confirmation). */
export const LOCALES = ['en', 'de', 'fr', 'es'] as const;
export type Locale = (typeof LOCALES)[number];

/**
 * The words Formcast itself writes to a workspace's contacts, in the workspace's locale (PUT /v1/workspace
 * `settings.locale`): the footer of broadcasts, the unsubscribe and confirmation pages, the built-in
 * confirmation email. `{name}` is the workspace's name.
 */
export interface Texts {
  footerReason: string;
  unsubscribe: string;
  /** The block footer's link to the web version (docs/archive.md). */
  viewInBrowser: string;
  unsubscribeTitle: string;
  unsubscribeQuestion: string;
  unsubscribeEverything: string;
  unsubscribeFromTopic: string;
  chooseTopics: string;
  saveChoices: string;
  unsubscribedAll: string;
  unsubscribedTopic: string;
  choicesSaved: string;
  linkInvalid: string;
  /** The preference centre (docs/bounces.md, "The unsubscribe page"): where the address stands, and what it can do. */
  prefsTitle: string;
  emailsFrom: string;
  stateSubscribed: string;
  stateSubscribedText: string;
  statePending: string;
  statePendingText: string;
  stateUnsubscribed: string;
  stateUnsubscribedText: string;
  stateBlocked: string;
  blockedBounced: string;
  blockedComplained: string;
  blockedManual: string;
  blockedCannot: string;
  topicsLegend: string;
  topicsAfterLegend: string;
  reasonLegend: string;
  reasonTooMany: string;
  reasonNotRelevant: string;
  reasonNeverSignedUp: string;
  reasonOther: string;
  commentLabel: string;
  resubscribeHeading: string;
  resubscribeText: string;
  resubscribeButton: string;
  resendButton: string;
  resubscribeSent: string;
  resubscribeRecent: string;
  confirmationOpen: string;
  alreadySubscribed: string;
  nothingChanged: string;
  topicsNotSaved: string;
  /** The unsubscribe link of a test send or a preview: nobody is unsubscribed. */
  unsubscribeTestTitle: string;
  unsubscribeTestText: string;
  confirmTitle: string;
  confirmText: string;
  confirmButton: string;
  confirmedTitle: string;
  confirmedText: string;
  alreadyTitle: string;
  alreadyText: string;
  expiredTitle: string;
  expiredText: string;
  confirmEmailSubject: string;
  confirmEmailHello: string;
  confirmEmailText: string;
  confirmEmailIgnore: string;
}

export const TEXTS: Record<Locale, Texts> = {
  en: {
    footerReason: 'You receive this email because you subscribed to {name}.',
    unsubscribe: 'Unsubscribe',
    viewInBrowser: 'View in browser',
    unsubscribeTitle: 'Unsubscribe',
    unsubscribeQuestion: 'Which emails should {email} stop receiving?',
    unsubscribeEverything: 'Unsubscribe from everything',
    unsubscribeFromTopic: 'Only stop emails about {topic}',
    chooseTopics: 'Or choose what you receive',
    saveChoices: 'Save my choices',
    unsubscribedAll: '{email} will not receive our emails any more.',
    unsubscribedTopic: '{email} will not receive emails about {topic} any more.',
    choicesSaved: 'Your choices for {email} are saved.',
    linkInvalid: 'This link is not valid. It may be mistyped or too old.',
    prefsTitle: 'Your email preferences',
    emailsFrom: 'Emails from {sender}',
    stateSubscribed: '{email} is subscribed.',
    stateSubscribedText: 'You receive emails from {name}.',
    statePending: '{email} is waiting for confirmation.',
    statePendingText: '{name} sends this address nothing until the link in the confirmation email is followed.',
    stateUnsubscribed: '{email} is unsubscribed.',
    stateUnsubscribedText: '{name} sends this address no emails.',
    stateBlocked: '{email} receives no emails from {name}.',
    blockedBounced: 'Messages to this address could not be delivered.',
    blockedComplained: 'A message to this address was reported as spam.',
    blockedManual: '{name} has stopped sending to this address.',
    blockedCannot: 'It cannot be subscribed again from this page. To receive emails again, please contact {name}.',
    topicsLegend: 'Topics you receive',
    topicsAfterLegend: 'Topics you would receive',
    reasonLegend: 'Why are you unsubscribing? (optional)',
    reasonTooMany: 'Too many emails',
    reasonNotRelevant: 'The emails are not relevant to me',
    reasonNeverSignedUp: 'I never signed up',
    reasonOther: 'Another reason',
    commentLabel: 'Anything else you would like to tell us? (optional)',
    resubscribeHeading: 'Subscribe again',
    resubscribeText:
      'To make sure this address is yours, we send a confirmation email to {email}. You are subscribed again once you follow its link.',
    resubscribeButton: 'Send me a confirmation email',
    resendButton: 'Send the confirmation email again',
    resubscribeSent:
      'A confirmation email is on its way to {email}. Follow its link to subscribe again; until then you receive nothing.',
    resubscribeRecent:
      'A confirmation email was sent to {email} less than an hour ago. Follow its link, or ask again later.',
    confirmationOpen: 'A confirmation email was sent on {date}. Follow its link to subscribe again.',
    alreadySubscribed: '{email} is subscribed already.',
    nothingChanged: 'Nothing was changed.',
    topicsNotSaved: 'Nothing was saved: {email} is not subscribed. Subscribe again first.',
    unsubscribeTestTitle: 'This is a test message',
    unsubscribeTestText:
      'This unsubscribe link is in a test send or a preview: following it changes nothing. In the real message each recipient gets a link of their own.',
    confirmTitle: 'Confirm your subscription',
    confirmText: 'One last step: confirm that you want to receive emails from {name}.',
    confirmButton: 'Confirm my subscription',
    confirmedTitle: 'You are subscribed',
    confirmedText: 'Thank you for confirming your subscription to {name}.',
    alreadyTitle: 'Already confirmed',
    alreadyText: 'This link was used already; your subscription is confirmed.',
    expiredTitle: 'This link has expired',
    expiredText: 'Please sign up again.',
    confirmEmailSubject: 'Please confirm your subscription to {name}',
    confirmEmailHello: 'Hi',
    confirmEmailText: 'Please confirm that you want to receive emails from us:',
    confirmEmailIgnore: 'If you did not sign up, ignore this email and you will not hear from us.',
  },
  de: {
    footerReason: 'Sie erhalten diese E-Mail, weil Sie {name} abonniert haben.',
    unsubscribe: 'Abmelden',
    viewInBrowser: 'Im Browser ansehen',
    unsubscribeTitle: 'Abmelden',
    unsubscribeQuestion: 'Welche E-Mails soll {email} nicht mehr erhalten?',
    unsubscribeEverything: 'Von allem abmelden',
    unsubscribeFromTopic: 'Nur E-Mails zu {topic} abbestellen',
    chooseTopics: 'Oder wählen Sie, was Sie erhalten',
    saveChoices: 'Auswahl speichern',
    unsubscribedAll: '{email} erhält keine E-Mails mehr von uns.',
    unsubscribedTopic: '{email} erhält keine E-Mails zu {topic} mehr.',
    choicesSaved: 'Ihre Auswahl für {email} ist gespeichert.',
    linkInvalid: 'Dieser Link ist ungültig. Vielleicht ist er falsch kopiert oder zu alt.',
    prefsTitle: 'Ihre E-Mail-Einstellungen',
    emailsFrom: 'E-Mails von {sender}',
    stateSubscribed: '{email} ist angemeldet.',
    stateSubscribedText: 'Sie erhalten E-Mails von {name}.',
    statePending: '{email} wartet auf die Bestätigung.',
    statePendingText: '{name} sendet dieser Adresse nichts, bis der Link in der Bestätigungs-E-Mail aufgerufen wurde.',
    stateUnsubscribed: '{email} ist abgemeldet.',
    stateUnsubscribedText: '{name} sendet dieser Adresse keine E-Mails.',
    stateBlocked: '{email} erhält keine E-Mails von {name}.',
    blockedBounced: 'Nachrichten an diese Adresse konnten nicht zugestellt werden.',
    blockedComplained: 'Eine Nachricht an diese Adresse wurde als Spam gemeldet.',
    blockedManual: '{name} sendet dieser Adresse nichts mehr.',
    blockedCannot:
      'Sie kann auf dieser Seite nicht wieder angemeldet werden. Wenn Sie wieder E-Mails erhalten möchten, wenden Sie sich bitte an {name}.',
    topicsLegend: 'Themen, die Sie erhalten',
    topicsAfterLegend: 'Themen, die Sie erhalten würden',
    reasonLegend: 'Warum melden Sie sich ab? (optional)',
    reasonTooMany: 'Zu viele E-Mails',
    reasonNotRelevant: 'Die E-Mails interessieren mich nicht',
    reasonNeverSignedUp: 'Ich habe mich nie angemeldet',
    reasonOther: 'Ein anderer Grund',
    commentLabel: 'Möchten Sie uns noch etwas sagen? (optional)',
    resubscribeHeading: 'Wieder anmelden',
    resubscribeText:
      'Damit sicher ist, dass die Adresse Ihnen gehört, senden wir eine Bestätigungs-E-Mail an {email}. Sobald Sie deren Link aufrufen, sind Sie wieder angemeldet.',
    resubscribeButton: 'Bestätigungs-E-Mail senden',
    resendButton: 'Bestätigungs-E-Mail erneut senden',
    resubscribeSent:
      'Eine Bestätigungs-E-Mail an {email} ist unterwegs. Rufen Sie ihren Link auf, um sich wieder anzumelden; bis dahin erhalten Sie nichts.',
    resubscribeRecent:
      'Vor weniger als einer Stunde wurde eine Bestätigungs-E-Mail an {email} gesendet. Rufen Sie ihren Link auf oder versuchen Sie es später erneut.',
    confirmationOpen:
      'Am {date} wurde eine Bestätigungs-E-Mail gesendet. Rufen Sie ihren Link auf, um sich wieder anzumelden.',
    alreadySubscribed: '{email} ist bereits angemeldet.',
    nothingChanged: 'Es wurde nichts geändert.',
    topicsNotSaved: 'Nichts wurde gespeichert: {email} ist nicht angemeldet. Melden Sie sich zuerst wieder an.',
    unsubscribeTestTitle: 'Dies ist eine Testnachricht',
    unsubscribeTestText:
      'Dieser Abmeldelink steht in einer Testsendung oder einer Vorschau: Er ändert nichts. In der echten Nachricht erhält jeder Empfänger einen eigenen Link.',
    confirmTitle: 'Anmeldung bestätigen',
    confirmText: 'Ein letzter Schritt: Bestätigen Sie, dass Sie E-Mails von {name} erhalten möchten.',
    confirmButton: 'Anmeldung bestätigen',
    confirmedTitle: 'Sie sind angemeldet',
    confirmedText: 'Danke, dass Sie Ihre Anmeldung bei {name} bestätigt haben.',
    alreadyTitle: 'Bereits bestätigt',
    alreadyText: 'Dieser Link wurde schon verwendet; Ihre Anmeldung ist bestätigt.',
    expiredTitle: 'Dieser Link ist abgelaufen',
    expiredText: 'Bitte melden Sie sich erneut an.',
    confirmEmailSubject: 'Bitte bestätigen Sie Ihre Anmeldung bei {name}',
    confirmEmailHello: 'Hallo',
    confirmEmailText: 'Bitte bestätigen Sie, dass Sie E-Mails von uns erhalten möchten:',
    confirmEmailIgnore:
      'Wenn Sie sich nicht angemeldet haben, ignorieren Sie diese E-Mail; Sie hören dann nichts mehr von uns.',
  },
  fr: {
    footerReason: 'Vous recevez cet e-mail parce que vous êtes abonné(e) à {name}.',
    unsubscribe: 'Se désabonner',
    viewInBrowser: 'Voir dans le navigateur',
    unsubscribeTitle: 'Se désabonner',
    unsubscribeQuestion: 'Quels e-mails {email} ne doit-il plus recevoir ?',
    unsubscribeEverything: 'Se désabonner de tout',
    unsubscribeFromTopic: 'Ne plus recevoir les e-mails sur {topic}',
    chooseTopics: 'Ou choisissez ce que vous recevez',
    saveChoices: 'Enregistrer mes choix',
    unsubscribedAll: '{email} ne recevra plus nos e-mails.',
    unsubscribedTopic: '{email} ne recevra plus d’e-mails sur {topic}.',
    choicesSaved: 'Vos choix pour {email} sont enregistrés.',
    linkInvalid: 'Ce lien n’est pas valide. Il est peut-être mal copié ou trop ancien.',
    prefsTitle: 'Vos préférences e-mail',
    emailsFrom: 'E-mails de {sender}',
    stateSubscribed: '{email} est abonné(e).',
    stateSubscribedText: 'Vous recevez les e-mails de {name}.',
    statePending: '{email} attend sa confirmation.',
    statePendingText:
      '{name} n’envoie rien à cette adresse tant que le lien de l’e-mail de confirmation n’a pas été suivi.',
    stateUnsubscribed: '{email} est désabonné(e).',
    stateUnsubscribedText: '{name} n’envoie aucun e-mail à cette adresse.',
    stateBlocked: '{email} ne reçoit aucun e-mail de {name}.',
    blockedBounced: 'Les messages envoyés à cette adresse n’ont pas pu être distribués.',
    blockedComplained: 'Un message envoyé à cette adresse a été signalé comme spam.',
    blockedManual: '{name} a cessé d’écrire à cette adresse.',
    blockedCannot:
      'Elle ne peut pas être réabonnée depuis cette page. Pour recevoir de nouveau des e-mails, contactez {name}.',
    topicsLegend: 'Les sujets que vous recevez',
    topicsAfterLegend: 'Les sujets que vous recevriez',
    reasonLegend: 'Pourquoi vous désabonnez-vous ? (facultatif)',
    reasonTooMany: 'Trop d’e-mails',
    reasonNotRelevant: 'Les e-mails ne me concernent pas',
    reasonNeverSignedUp: 'Je ne me suis jamais inscrit(e)',
    reasonOther: 'Une autre raison',
    commentLabel: 'Souhaitez-vous nous dire autre chose ? (facultatif)',
    resubscribeHeading: 'Se réabonner',
    resubscribeText:
      'Pour vérifier que cette adresse est la vôtre, nous envoyons un e-mail de confirmation à {email}. Vous êtes réabonné(e) dès que vous suivez son lien.',
    resubscribeButton: 'M’envoyer un e-mail de confirmation',
    resendButton: 'Renvoyer l’e-mail de confirmation',
    resubscribeSent:
      'Un e-mail de confirmation a été envoyé à {email}. Suivez son lien pour vous réabonner ; d’ici là, vous ne recevez rien.',
    resubscribeRecent:
      'Un e-mail de confirmation a été envoyé à {email} il y a moins d’une heure. Suivez son lien, ou réessayez plus tard.',
    confirmationOpen: 'Un e-mail de confirmation a été envoyé le {date}. Suivez son lien pour vous réabonner.',
    alreadySubscribed: '{email} est déjà abonné(e).',
    nothingChanged: 'Rien n’a été modifié.',
    topicsNotSaved: 'Rien n’a été enregistré : {email} n’est pas abonné(e). Réabonnez-vous d’abord.',
    unsubscribeTestTitle: 'Ceci est un message de test',
    unsubscribeTestText:
      'Ce lien de désabonnement figure dans un envoi de test ou un aperçu : il ne change rien. Dans le vrai message, chaque destinataire reçoit son propre lien.',
    confirmTitle: 'Confirmez votre abonnement',
    confirmText: 'Dernière étape : confirmez que vous souhaitez recevoir les e-mails de {name}.',
    confirmButton: 'Confirmer mon abonnement',
    confirmedTitle: 'Vous êtes abonné(e)',
    confirmedText: 'Merci d’avoir confirmé votre abonnement à {name}.',
    alreadyTitle: 'Déjà confirmé',
    alreadyText: 'Ce lien a déjà été utilisé ; votre abonnement est confirmé.',
    expiredTitle: 'Ce lien a expiré',
    expiredText: 'Veuillez vous inscrire à nouveau.',
    confirmEmailSubject: 'Merci de confirmer votre abonnement à {name}',
    confirmEmailHello: 'Bonjour',
    confirmEmailText: 'Merci de confirmer que vous souhaitez recevoir nos e-mails :',
    confirmEmailIgnore:
      'Si vous ne vous êtes pas inscrit(e), ignorez cet e-mail : vous n’entendrez plus parler de nous.',
  },
  es: {
    footerReason: 'Recibe este correo porque se suscribió a {name}.',
    unsubscribe: 'Darse de baja',
    viewInBrowser: 'Ver en el navegador',
    unsubscribeTitle: 'Darse de baja',
    unsubscribeQuestion: '¿Qué correos debe dejar de recibir {email}?',
    unsubscribeEverything: 'Darse de baja de todo',
    unsubscribeFromTopic: 'Dejar de recibir los correos sobre {topic}',
    chooseTopics: 'O elija lo que recibe',
    saveChoices: 'Guardar mis preferencias',
    unsubscribedAll: '{email} ya no recibirá nuestros correos.',
    unsubscribedTopic: '{email} ya no recibirá correos sobre {topic}.',
    choicesSaved: 'Sus preferencias para {email} se han guardado.',
    linkInvalid: 'Este enlace no es válido. Puede estar mal copiado o ser demasiado antiguo.',
    prefsTitle: 'Sus preferencias de correo',
    emailsFrom: 'Correos de {sender}',
    stateSubscribed: '{email} está suscrito.',
    stateSubscribedText: 'Recibe correos de {name}.',
    statePending: '{email} está pendiente de confirmación.',
    statePendingText: '{name} no envía nada a esta dirección hasta que se siga el enlace del correo de confirmación.',
    stateUnsubscribed: '{email} está dado de baja.',
    stateUnsubscribedText: '{name} no envía correos a esta dirección.',
    stateBlocked: '{email} no recibe correos de {name}.',
    blockedBounced: 'Los mensajes a esta dirección no se pudieron entregar.',
    blockedComplained: 'Un mensaje a esta dirección se marcó como spam.',
    blockedManual: '{name} ha dejado de escribir a esta dirección.',
    blockedCannot:
      'No se puede volver a suscribir desde esta página. Para volver a recibir correos, póngase en contacto con {name}.',
    topicsLegend: 'Temas que recibe',
    topicsAfterLegend: 'Temas que recibiría',
    reasonLegend: '¿Por qué se da de baja? (opcional)',
    reasonTooMany: 'Demasiados correos',
    reasonNotRelevant: 'Los correos no me interesan',
    reasonNeverSignedUp: 'Nunca me suscribí',
    reasonOther: 'Otro motivo',
    commentLabel: '¿Quiere decirnos algo más? (opcional)',
    resubscribeHeading: 'Volver a suscribirse',
    resubscribeText:
      'Para asegurarnos de que la dirección es suya, enviamos un correo de confirmación a {email}. Vuelve a estar suscrito en cuanto siga su enlace.',
    resubscribeButton: 'Enviarme un correo de confirmación',
    resendButton: 'Volver a enviar el correo de confirmación',
    resubscribeSent:
      'Se ha enviado un correo de confirmación a {email}. Siga su enlace para volver a suscribirse; hasta entonces no recibe nada.',
    resubscribeRecent:
      'Se envió un correo de confirmación a {email} hace menos de una hora. Siga su enlace o vuelva a intentarlo más tarde.',
    confirmationOpen: 'Se envió un correo de confirmación el {date}. Siga su enlace para volver a suscribirse.',
    alreadySubscribed: '{email} ya está suscrito.',
    nothingChanged: 'No se ha cambiado nada.',
    topicsNotSaved: 'No se ha guardado nada: {email} no está suscrito. Vuelva a suscribirse primero.',
    unsubscribeTestTitle: 'Este es un mensaje de prueba',
    unsubscribeTestText:
      'Este enlace para darse de baja está en un envío de prueba o una vista previa: no cambia nada. En el mensaje real cada destinatario recibe su propio enlace.',
    confirmTitle: 'Confirme su suscripción',
    confirmText: 'Un último paso: confirme que desea recibir correos de {name}.',
    confirmButton: 'Confirmar mi suscripción',
    confirmedTitle: 'Está suscrito',
    confirmedText: 'Gracias por confirmar su suscripción a {name}.',
    alreadyTitle: 'Ya confirmado',
    alreadyText: 'Este enlace ya se usó; su suscripción está confirmada.',
    expiredTitle: 'Este enlace ha caducado',
    expiredText: 'Vuelva a suscribirse, por favor.',
    confirmEmailSubject: 'Confirme su suscripción a {name}',
    confirmEmailHello: 'Hola',
    confirmEmailText: 'Confirme que desea recibir nuestros correos:',
    confirmEmailIgnore: 'Si no se suscribió, ignore este correo y no volverá a saber de nosotros.',
  },
};

/** A text with its `{placeholders}` filled (values are inserted as given: escape them for HTML first). */
export function fill(text: string, values: Record<string, string>): string {
  return text.replace(/\{(\w+)\}/g, (m, k: string) => values[k] ?? m);
}
