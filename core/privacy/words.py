"""The word lists the prose detectors use (passwords, phones), apart from the patterns.

Split out of `detectors` so that module holds the patterns and their rules,
and these lists can grow (one more language, one more filler word) without
it.  Each list is lowercase; the alternations are regular-expression text.
"""

from __future__ import annotations

#: Words naming a password, in the languages agents write notes in.  The long
#: ones also end compounds (`WLAN-Passwort`, `rootpassword`, `Zugangspasswort`).
#: Plain words (no regular-expression syntax): `matching.starts` looks them up as
#: written.  The Scandinavian definite forms (`lösenordet är x`); Turkish `şifre`; a
#: Wi-Fi network's key is its password (`WPA2 key: x`).
PASSWORD_WORDS_LONG = (
    r"password|passwort|passwd|passphrase|passcode|kennwort|wachtwoord|lösenordet|lösenord|"
    r"salasana|adgangskoden|adgangskode|passordet|passord|contraseña|contrasena|senha|"
    r"mot de passe|hasło|haslo|heslo|jelszó|пароль|parola d'ordine|şifresi|şifre|"
    r"wpa key|wpa2 key|wpa3 key|wpa-psk|wpa2-psk|wifi key|wi-fi key|wlan key|wlan-schlüssel"
)
#: Short names: only on their own (`pw: x`, `mdp : x`), never inside a word.
PASSWORD_WORDS_SHORT = r"pwd|pw|mdp|clave"
#: `pass` is also an English verb and a test result: only as `pass: x` / `pass=x`.
PASSWORD_WORD_PASS = "pass"
#: CJK names: CJK text has no word boundaries, so these match anywhere.
PASSWORD_WORDS_CJK = r"密码|密碼|パスワード|비밀번호|암호"

#: "the password is X" in other languages (`ist`, `lautet`, `est`, `es`, `è`, ...); not
#: the short ones that are English words too (Finnish `on`, Danish `er`).
COPULAS = r"is|was|are|were|has been|will be|ist|war|lautet|est|était|es|era|fue|è|é|är|jest|je"
#: "the password for the NAS is X": the words that name what it is for.
FOR_WORDS = (
    r"for|of|on|to|at|für|zum|zur|vom|im|beim|de|du|des|pour|dans|do|da|del|della|per|van|voor|"
    r"för|til|dla|на|для|от"
)

#: Words a password in prose is never: "the password is stored in 1Password".
NOT_PASSWORDS = frozenset(
    (
        "a", "an", "the", "in", "on", "at", "of", "for", "to", "from", "by", "with", "without",
        "via", "and", "or", "not", "no", "none", "null", "nil", "nothing", "true", "false", "yes",
        "is", "was", "be", "been", "being", "it", "its", "this", "that", "these", "those", "there",
        "here", "same", "set", "unset", "empty", "blank", "required", "needed", "missing", "wrong",
        "incorrect", "invalid", "correct", "right", "expired", "stale", "old", "new", "reset",
        "rotated", "changed", "updated", "stored", "saved", "kept", "managed", "hidden", "masked",
        "redacted", "unknown", "known", "shared", "sent", "given", "written", "encrypted", "hashed",
        "protected", "secret", "secure", "strong", "weak", "long", "short", "ok", "okay", "still",
        "also", "only", "just", "now", "then", "never", "always", "please", "see", "check", "use",
        "used", "using", "ask", "asked", "policy", "field", "prompt", "manager", "rules", "rule",
        "length", "change", "changes", "requirement", "requirements", "n/a", "na", "tbd", "tba",
        "todo", "tbc", "too", "fine", "valid", "enough", "different", "identical", "random",
        "complex", "simple", "easy", "hard", "optional", "mandatory", "visible", "available",
        "unavailable", "configured", "defined", "undefined", "supplied", "provided", "forgotten",
        "lost", "locked", "compromised", "leaked", "exposed", "temporary", "permanent",
        "case-sensitive", "my", "your", "his", "her", "our", "their", "mine", "yours", "whatever",
        "something", "anything", "what", "which", "who", "where", "when", "how", "why", "probably",
        "definitely", "actually", "currently", "correctly", "below", "above", "attached",
        "included", "inside", "elsewhere", "somewhere", "there's", "here's",
        # verbs that start a sentence about it (`password - must be 12+ chars`)
        "must", "should", "shall", "can", "cannot", "could", "would", "will", "may", "might",
        "needs", "need", "has", "have", "had", "does", "did", "expires", "expire", "contains",
        "requires", "goes", "lives", "sits", "comes",
        # ways of signing in that take no password
        "sso", "ldap", "oauth", "saml", "mfa", "2fa", "totp", "passkey", "passwordless",
        # types in code (`password: str`), and the placeholder names foo and bar
        "str", "bytes", "int", "bool", "float", "any", "object", "list", "dict", "tuple",
        "string", "number", "boolean", "secretstr", "foo", "bar", "baz", "qux", "foobar",
    )
)  # fmt: skip

#: Words that say the number after them is a telephone number (several languages).
PHONE_WORDS = (
    r"phone|tel|telephone|mobile|cell|cellphone|mob|whatsapp|signal|fax|call|ring|sms|text|"
    r"landline|handy|handynummer|telefon|telefonnummer|mobil|mobilnummer|rufnummer|"
    r"festnetz|tél|téléphone|portable|mobile|numéro|teléfono|telefono|móvil|movil|celular|"
    r"cellulare|telemóvel|gsm|telefoon|mobiel|телефон|тел|携帯|電話|電話番号|手机|电话|"
    r"backup line|direct line|phone line"
)

#: Words that make the lowercase words after "the password is" a sentence
#: ("is on the fridge", "is the same as last year"), not a passphrase.
PROSE_WORDS = frozenset(
    (
        "a", "an", "the", "in", "on", "at", "of", "for", "to", "from", "by", "with", "into",
        "onto", "under", "over", "after", "before", "about", "than", "as", "like", "is", "are",
        "was", "were", "be", "it", "this", "that", "see", "ask", "use", "stored", "kept", "saved",
        "and", "or", "but", "so", "if", "because", "not", "no", "none", "our", "my", "your",
        "his", "her", "its", "their", "we", "you", "i", "he", "she", "they", "them", "us", "me",
        "him", "same", "also", "still", "too", "very", "never", "always", "just", "only", "now",
        "then", "again", "here", "there", "every", "each", "all", "some", "any", "will",
        "would", "should", "can", "could", "must", "may", "might", "has", "have", "had", "do",
        "does", "did", "what", "which", "who", "how", "why", "where", "when", "yet", "already",
    )
)  # fmt: skip

__all__ = [
    "COPULAS",
    "FOR_WORDS",
    "NOT_PASSWORDS",
    "PASSWORD_WORDS_CJK",
    "PASSWORD_WORDS_LONG",
    "PASSWORD_WORDS_SHORT",
    "PASSWORD_WORD_PASS",
    "PHONE_WORDS",
    "PROSE_WORDS",
]
