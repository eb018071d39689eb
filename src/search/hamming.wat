;; Hamming distances between one binary query code and n stored codes.
;; hamming(codes, q, words64, n, out): out[i] (u16) = popcount(codes[i] xor q), codes are words64
;; little-endian 64-bit words each, stored back to back from `codes`; q at `q`; out at `out`.
(module
  (memory (export "mem") 1)
  (func (export "hamming") (param $codes i32) (param $q i32) (param $w i32) (param $n i32) (param $out i32)
    (local $i i32) (local $j i32) (local $p i32) (local $d i64) (local $o i32)
    (local.set $p (local.get $codes))
    (local.set $o (local.get $out))
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
        (i32.store16 (local.get $o) (i32.wrap_i64 (local.get $d)))
        (local.set $o (i32.add (local.get $o) (i32.const 2)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $rows))))
)
