/** The welcome page a site without a template starts with. */
export function welcomePage(siteName: string) {
  const safe = siteName.replace(/[<>{}]/g, "");
  return {
    path: "/",
    title: "Welcome",
    content: [
      `# Welcome to ${safe}`,
      "",
      "This site is in coming-soon mode. Edit this page, add media from the library, then publish.",
      "",
    ].join("\n"),
  };
}

/** The default layout of a new site; `href: "/"` is stored as a reference to its welcome page. */
export const DEFAULT_LAYOUT = {
  logo: null,
  header: { navigation: [{ label: "Home", href: "/" }] },
  footer: { text: "", links: [] },
};

/** The default theme tokens of a new site. */
export const DEFAULT_STYLES = {
  colors: { primary: "#2563eb", background: "#ffffff", text: "#0f172a" },
  fonts: { heading: "Inter", body: "Inter" },
};
