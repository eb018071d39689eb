;; Hamming-distance kernels for ragloom's binary vector prefilter (src/search/hamming.ts).
;; Build: wat2wasm --enable-simd hamming.wat -o hamming.wasm, then base64 into WASM_BASE64.
;; Codes are `w` little-endian 64-bit words each, back to back from `codes`; `q` is the query code.
(module
  (memory (export "mem") 1)

  ;; scan(codes, q, w, n, ok, dist, hist): for each slot i < n, dist[i] (u16) = popcount(codes[i] xor q);
  ;; when ok[i] (u8) != 0, hist[dist[i]] (u32) += 1.
  (func (export "scan") (param $codes i32) (param $q i32) (param $w i32) (param $n i32)
                        (param $ok i32) (param $dist i32) (param $hist i32)
    (local $i i32) (local $j i32) (local $p i32) (local $d i64) (local $h i32)
    (local.set $p (local.get $codes))
    (block $done
      (loop $rows
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $d (i64.const 0))
        (local.set $j (i32.const 0))
        (block $wd
          (loop $words
            (br_if $wd (i32.ge_u (local.get $j) (local.get $w)))
            (local.set $d
              (i64.add (local.get $d)
                (i64.popcnt
                  (i64.xor
                    (i64.load (local.get $p))
                    (i64.load (i32.add (local.get $q) (i32.shl (local.get $j) (i32.const 3))))))))
            (local.set $p (i32.add (local.get $p) (i32.const 8)))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $words)))
        (i32.store16 (i32.add (local.get $dist) (i32.shl (local.get $i) (i32.const 1))) (i32.wrap_i64 (local.get $d)))
        (if (i32.load8_u (i32.add (local.get $ok) (local.get $i)))
          (then
            (local.set $h (i32.add (local.get $hist) (i32.shl (i32.wrap_i64 (local.get $d)) (i32.const 2))))
            (i32.store (local.get $h) (i32.add (i32.load (local.get $h)) (i32.const 1)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $rows))))

  ;; scan4: scan for w = 4 (256-bit codes, the built-in model's): the query's words are held in
  ;; locals and each row is four loads, without the word loop (~1.5x faster per row).
  (func (export "scan4") (param $codes i32) (param $q i32) (param $n i32)
                         (param $ok i32) (param $dist i32) (param $hist i32)
    (local $i i32) (local $p i32) (local $d i32) (local $h i32)
    (local $q0 i64) (local $q1 i64) (local $q2 i64) (local $q3 i64)
    (local.set $q0 (i64.load (local.get $q)))
    (local.set $q1 (i64.load offset=8 (local.get $q)))
    (local.set $q2 (i64.load offset=16 (local.get $q)))
    (local.set $q3 (i64.load offset=24 (local.get $q)))
    (local.set $p (local.get $codes))
    (block $done
      (loop $rows
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $d (i32.wrap_i64
          (i64.add
            (i64.add (i64.popcnt (i64.xor (i64.load (local.get $p)) (local.get $q0)))
                     (i64.popcnt (i64.xor (i64.load offset=8 (local.get $p)) (local.get $q1))))
            (i64.add (i64.popcnt (i64.xor (i64.load offset=16 (local.get $p)) (local.get $q2)))
                     (i64.popcnt (i64.xor (i64.load offset=24 (local.get $p)) (local.get $q3)))))))
        (i32.store16 (i32.add (local.get $dist) (i32.shl (local.get $i) (i32.const 1))) (local.get $d))
        (if (i32.load8_u (i32.add (local.get $ok) (local.get $i)))
          (then
            (local.set $h (i32.add (local.get $hist) (i32.shl (local.get $d) (i32.const 2))))
            (i32.store (local.get $h) (i32.add (i32.load (local.get $h)) (i32.const 1)))))
        (local.set $p (i32.add (local.get $p) (i32.const 32)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $rows))))

  ;; collect8(dist, ok, n, cut, out) → count: writes each slot i with ok[i] != 0 and dist[i] <= cut
  ;; to out (u32), in order. Eight slots at a time (SIMD): their distances and ok flags are compared
  ;; at once, and only the few that pass (~1%) are written one by one.
  (func (export "collect8") (param $dist i32) (param $ok i32) (param $n i32) (param $cut i32) (param $out i32) (result i32)
    (local $i i32) (local $c i32) (local $m i32) (local $vcut v128) (local $end8 i32)
    (local.set $vcut (i16x8.splat (local.get $cut)))
    (local.set $end8 (i32.and (local.get $n) (i32.const -8)))
    (block $done
      (loop $rows
        (br_if $done (i32.ge_u (local.get $i) (local.get $end8)))
        (local.set $m (i16x8.bitmask (v128.and
          (i16x8.le_u (v128.load (i32.add (local.get $dist) (i32.shl (local.get $i) (i32.const 1)))) (local.get $vcut))
          (i16x8.ne (i16x8.extend_low_i8x16_u (v128.load64_zero (i32.add (local.get $ok) (local.get $i))))
                    (v128.const i16x8 0 0 0 0 0 0 0 0)))))
        (block $bits
          (loop $each
            (br_if $bits (i32.eqz (local.get $m)))
            (i32.store (i32.add (local.get $out) (i32.shl (local.get $c) (i32.const 2)))
              (i32.add (local.get $i) (i32.ctz (local.get $m))))
            (local.set $c (i32.add (local.get $c) (i32.const 1)))
            (local.set $m (i32.and (local.get $m) (i32.sub (local.get $m) (i32.const 1))))
            (br $each)))
        (local.set $i (i32.add (local.get $i) (i32.const 8)))
        (br $rows)))
    ;; The last n mod 8 slots, one at a time.
    (block $tail
      (loop $rest
        (br_if $tail (i32.ge_u (local.get $i) (local.get $n)))
        (if (i32.and
              (i32.le_u (i32.load16_u (i32.add (local.get $dist) (i32.shl (local.get $i) (i32.const 1)))) (local.get $cut))
              (i32.ne (i32.load8_u (i32.add (local.get $ok) (local.get $i))) (i32.const 0)))
          (then
            (i32.store (i32.add (local.get $out) (i32.shl (local.get $c) (i32.const 2))) (local.get $i))
            (local.set $c (i32.add (local.get $c) (i32.const 1)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $rest)))
    (local.get $c))
)
