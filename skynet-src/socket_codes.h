#ifndef SKYNET_SOCKET_CODES_H
#define SKYNET_SOCKET_CODES_H

/*
 * Public header (the set is listed at the top of skynet.h). The numbers the
 * socket library (socket_server.h) and the public socket API
 * (skynet_socket.h) share, declared once: event types, socket kinds and
 * limits. It includes nothing, so the socket library still builds alone.
 */

#define SKYNET_SOCKET_MAX 65536 // sockets open at once

/* Event types: socket_server_poll's results, the type of struct skynet_socket_message. */
#define SKYNET_SOCKET_TYPE_DATA    1
#define SKYNET_SOCKET_TYPE_CONNECT 2
#define SKYNET_SOCKET_TYPE_CLOSE   3
#define SKYNET_SOCKET_TYPE_ACCEPT  4
#define SKYNET_SOCKET_TYPE_ERROR   5
#define SKYNET_SOCKET_TYPE_UDP     6
#define SKYNET_SOCKET_TYPE_WARNING 7

/* UDP addresses: 1 byte family (4 or 6), 2 bytes port (big-endian), the address. */
#define SKYNET_SOCKET_UDP_ADDRESS_MAX 19

/* Socket kinds in the socket statistics (struct skynet_socket_info, socket_server_info). */
#define SKYNET_SOCKET_INFO_LISTEN 1
#define SKYNET_SOCKET_INFO_TCP    2
#define SKYNET_SOCKET_INFO_UDP    3
#define SKYNET_SOCKET_INFO_BIND   4

#endif
