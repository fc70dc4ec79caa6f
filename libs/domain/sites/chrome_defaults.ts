/**
 * The built-in English text of every chrome string the site shell shows: navigation, footer, the
 * coming-soon and not-found pages, the cookie notice and the newsletter form. A site overrides any key
 * per locale; a key it never set reads as this text.
 */
export const CHROME_DEFAULTS: Readonly<Record<string, string>> = Object.freeze({
  "nav.home": "Home",
  "nav.menu": "Menu",
  "nav.openMenu": "Open menu",
  "nav.closeMenu": "Close menu",
  "nav.skipToContent": "Skip to content",
  "footer.copyright": "All rights reserved.",
  "footer.privacy": "Privacy",
  "footer.terms": "Terms",
  "footer.backToTop": "Back to top",
  "footer.poweredBy": "Powered by Site Content API",
  "comingSoon.title": "Coming soon",
  "comingSoon.message": "We are working on something new. Check back soon.",
  "comingSoon.notifyMe": "Tell me when it launches",
  "notFound.title": "Page not found",
  "notFound.message": "The page you are looking for does not exist or has moved.",
  "notFound.backHome": "Back to the home page",
  "cookieNotice.message": "This site uses cookies to work and to understand how it is used.",
  "cookieNotice.accept": "Accept",
  "cookieNotice.decline": "Decline",
  "cookieNotice.settings": "Cookie settings",
  "cookieNotice.learnMore": "Learn more",
  "newsletter.title": "Subscribe to our newsletter",
  "newsletter.description": "Get new posts and updates by email.",
  "newsletter.emailLabel": "Email address",
  "newsletter.emailPlaceholder": "you@example.com",
  "newsletter.submit": "Subscribe",
  "newsletter.submitting": "Subscribing…",
  "newsletter.success": "Thanks! Check your inbox to confirm your subscription.",
  "newsletter.invalidEmail": "Enter a valid email address.",
  "newsletter.error": "Something went wrong. Please try again.",
  "newsletter.consent": "We only use your email to send this newsletter. Unsubscribe at any time.",
});
