"""Peers that speak a real protocol on 127.0.0.1 (HTTP APIs, a gateway, PostgreSQL,
llama.cpp's own server): the code under test talks to them as to the real thing."""
