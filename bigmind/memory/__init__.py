"""Memory features: the packet, journal, people, company knowledge, focus, diff…"""
