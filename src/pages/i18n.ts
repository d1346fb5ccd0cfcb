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
