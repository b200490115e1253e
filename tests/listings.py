"""The paper's listings (spec §7), once, for every test that needs them (``from listings
import LISTING_1``: tests/ is on sys.path under pytest, as for tests/reference/).

Listings 1 and 2 are copied verbatim from the spec (``*_AS_PRINTED``); ``LISTING_1`` and
``LISTING_2`` fix only the paper's scanning errors ``: =`` -> ``:=`` (the grammar accepts
both). ``LISTING_4`` is WARSHALL-adapt in the project's ``parallel for`` form. The Star files
that must hold the same texts (programs/, stdlib/, tests/star/) are checked against these by
tests/unit/test_listings.py."""
from __future__ import annotations

# ---- Listing 1, as printed in spec §7 ----
LISTING_1_AS_PRINTED = """\
proc WARSHALL(n:integer; var P: table);
/*Here n is the number of vertices.*/
var X:slice(P); v,w: word; i,k: integer;
begin for k:=1 to n do
  begin
    X :=COL(k , P) ;
    w:=ROW (k,P) ;
    while SOME(X) do
    begin
      i : = STEP(X) ;
      v:=ROW(i,P);
      v=v or w;
      ROW(i,P):=v;
    end ;
  end ;
end ;
"""
LISTING_1 = LISTING_1_AS_PRINTED.replace("i : = STEP(X)", "i := STEP(X)")

# ---- Listing 2, as printed in spec §7 ----
LISTING_2_AS_PRINTED = """\
proc WARSHALL-C(n: integer ; var P: table);
var x:word; V, W: Slice; i,k: integer;
begin for k:=1 to n do
  Begin
    x:=ROW(k,P);
    W:=COL(k,P);
    i = STEP (x);
    while i >0 do
    Begin
      V :=COL(i,P) ;
      V=V or W;
      COL ( i , P ) : =V ;
      i:=STEP(x);
    end;
  end;
end;
"""
LISTING_2 = LISTING_2_AS_PRINTED.replace("COL ( i , P ) : =V", "COL ( i , P ) :=V")

# ---- Listing 4 (WARSHALL-adapt), the body of the paper's kernel as a `parallel for` ----
LISTING_4 = """\
proc WARSHALL-adapt(n: integer; var P: table);
var V, W: slice; i, k: integer;
begin
  for k := 1 to n do
    parallel for i := 1 to n do
    begin
      W := COL(k, P);
      V := COL(i, P);
      if V(k) = 1 then V := V or W;
      COL(i, P) := V;
    end;
end;
"""
