import { type Static, Type } from "@sinclair/typebox";
import { named } from "@site/domain/core";

// One model per shape: the chrome routes, the MCP tool and the TypeScript types all read these.

const Locale = Type.String({
  minLength: 1,
  maxLength: 35,
  description: "a BCP 47 tag: language, optional script and region (en, de, de-CH)",
  examples: ["de-CH"],
});

/** The chrome strings of a site as read in one locale. */
export const ChromeView = named(
  "Chrome",
  Type.Object({
    locale: Locale,
    defaultLocale: Locale,
    locales: Type.Array(Locale, {
      description: "the default locale and every locale the site has strings in",
    }),
    strings: Type.Record(Type.String(), Type.String(), {
      description:
        "every key: the built-in English text, overridden key by key by the site's strings of the locale, its language, then the default locale",
    }),
  }),
);
/** The chrome strings of a site as read in one locale. */
export type ChromeView = Static<typeof ChromeView>;

/** The body of PUT …/chrome/<locale>: keys merged into that locale; null restores the default. */
export const ChromeStringsUpdate = Type.Object({
  strings: Type.Record(Type.String(), Type.Union([Type.String(), Type.Null()]), {
    description:
      "key (dotted lower camel case, at most 100 characters) → plain text (at most 2,000 characters, never HTML) or null to restore the default",
    examples: [{ "footer.copyright": "Alle Rechte vorbehalten.", "cookieNotice.accept": "Akzeptieren" }],
  }),
});
/** The body of PUT …/chrome/<locale>. */
export type ChromeStringsUpdate = Static<typeof ChromeStringsUpdate>;

/** The body of PATCH …/chrome. */
export const ChromeSettingsUpdate = Type.Object({ defaultLocale: Locale });
/** The body of PATCH …/chrome. */
export type ChromeSettingsUpdate = Static<typeof ChromeSettingsUpdate>;

/** The chrome of the public site read: the negotiated locale and its strings. */
export const PublicChrome = Type.Object({
  locale: Locale,
  strings: Type.Record(Type.String(), Type.String()),
});
