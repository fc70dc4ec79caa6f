/** Test support for libs/net: a throwaway CA and TLS server files made with openssl; a TCP proxy that takes a server away; raw loopback TCP servers and clients. */

export * from "./sockets.ts";
export * from "./tcp_proxy.ts";
export * from "./tls.ts";
