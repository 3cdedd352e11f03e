"""Help-desk questions written for the issue-48 tests, each with a translation made by hand.

``PAIRS``: (id, English question, language, the same question in that language), 12 in
Spanish, 6 in German, 6 in French. ``OTHERS``: English questions near the same topics
(password, invoice, delivery...) that are nobody's translation: the translation must be
found as the duplicate of its original, not of a neighbour on the same subject.
"""

from __future__ import annotations

PAIRS = [
    ("q01", "How do I reset my password?", "es", "¿Cómo restablezco mi contraseña?"),
    ("q02", "Where can I download my invoice?", "es", "¿Dónde puedo descargar mi factura?"),
    ("q03", "My package has not arrived yet.", "es", "Mi paquete todavía no ha llegado."),
    ("q04", "Can I change the delivery address after ordering?", "es",
     "¿Puedo cambiar la dirección de entrega después de hacer el pedido?"),
    ("q05", "How long does a refund take?", "es", "¿Cuánto tarda un reembolso?"),
    ("q06", "The app crashes when I open the camera.", "es",
     "La aplicación se cierra cuando abro la cámara."),
    ("q07", "How do I delete my account?", "es", "¿Cómo elimino mi cuenta?"),
    ("q08", "Do you ship to Canada?", "es", "¿Hacen envíos a Canadá?"),
    ("q09", "Why was my card declined?", "es", "¿Por qué rechazaron mi tarjeta?"),
    ("q10", "How can I talk to a person on the phone?", "es",
     "¿Cómo puedo hablar por teléfono con una persona?"),
    ("q11", "The battery drains very fast after the update.", "es",
     "La batería se agota muy rápido después de la actualización."),
    ("q12", "Is there a discount for students?", "es", "¿Hay algún descuento para estudiantes?"),
    ("q13", "How do I turn on two-factor authentication?", "de",
     "Wie aktiviere ich die Zwei-Faktor-Authentifizierung?"),
    ("q14", "The printer does not connect to the Wi-Fi.", "de",
     "Der Drucker verbindet sich nicht mit dem WLAN."),
    ("q15", "Can I cancel my subscription at any time?", "de",
     "Kann ich mein Abonnement jederzeit kündigen?"),
    ("q16", "Where do I find the serial number of the device?", "de",
     "Wo finde ich die Seriennummer des Geräts?"),
    ("q17", "My order arrived damaged.", "de", "Meine Bestellung ist beschädigt angekommen."),
    ("q18", "How do I export my contacts?", "de", "Wie exportiere ich meine Kontakte?"),
    ("q19", "What are your opening hours on Sunday?", "fr",
     "Quels sont vos horaires d'ouverture le dimanche ?"),
    ("q20", "I forgot my username.", "fr", "J'ai oublié mon nom d'utilisateur."),
    ("q21", "How do I update the firmware of the router?", "fr",
     "Comment mettre à jour le micrologiciel du routeur ?"),
    ("q22", "Can I pay in instalments?", "fr", "Puis-je payer en plusieurs fois ?"),
    ("q23", "The screen stays black when I start the laptop.", "fr",
     "L'écran reste noir quand je démarre l'ordinateur portable."),
    ("q24", "How do I return a product?", "fr", "Comment retourner un produit ?"),
]
OTHERS = [
    ("o01", "How do I change my email address?"),
    ("o02", "Can I get a paper copy of my invoice by mail?"),
    ("o03", "Which carriers deliver your parcels?"),
    ("o04", "My refund was smaller than the price I paid."),
    ("o05", "The app is slow on older phones."),
    ("o06", "Can I merge two accounts into one?"),
    ("o07", "How much does shipping to Europe cost?"),
    ("o08", "Which cards do you accept?"),
    ("o09", "Do you offer a discount for teachers?"),
    ("o10", "Which routers are supported?"),
    ("o11", "How do I import contacts from my old phone?"),
    ("o12", "The keyboard of my laptop stopped working."),
]
