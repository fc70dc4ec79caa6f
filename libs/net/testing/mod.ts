/** Test support for libs/net: a throwaway CA and TLS server files made with openssl; a TCP proxy that takes a server away. */
export * from "./tcp_proxy.ts";
export * from "./tls.ts";
