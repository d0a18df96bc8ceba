# Independent re-derivation of pitboss's documented shuffle (src/rng.rs):
# ChaCha20 keyed by the seed (20 rounds, zero counter and nonce), 32-bit little-endian words,
# rejection sampling, forward Fisher-Yates over a deck in rank-then-suit order.
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
import struct
def words(seed):
    c = Cipher(algorithms.ChaCha20(bytes(seed), b"\0"*16), mode=None).encryptor()
    while True:
        block = c.update(b"\0"*64)
        for i in range(16):
            yield struct.unpack_from("<I", block, 4*i)[0]
def uniform(w, m):
    zone = (0xFFFFFFFF // m) * m
    while True:
        x = next(w)
        if x < zone: return x % m
ranks = "23456789TJQKA"; suits = "cdhs"
deck = [r+s for r in ranks for s in suits]
def shuffled(seed, decks=1):
    cards = deck*decks; w = words(seed); n=len(cards)
    for i in range(n-1):
        j = i + uniform(w, n-i); cards[i],cards[j]=cards[j],cards[i]
    return cards
print(shuffled([0]*32)[:5])
print(uniform(words([0]*32), 37))
