;; Exact dot products for the in-memory vector index (dots.ts beside this file).
;; Build: wat2wasm --enable-simd dots.wat (or the `wabt` npm package), then base64 into WASM_BASE64.
;; Rows are f32, `dim` per row (dim % 4 == 0), back to back from `vecs`; the query is given widened
;; to f64 at `q`. Each product and sum is the f64 arithmetic of the TypeScript fallback, in its
;; order (four running sums over j mod 4, then ((a + b) + c) + d), so the results are bit-identical.
(module
  (import "env" "mem" (memory 1))

  ;; The dot product of the query with the row at byte address $row.
  (func $dot (param $q i32) (param $row i32) (param $dim i32) (result f64)
    (local $ab v128) (local $cd v128) (local $x v128) (local $end i32)
    (local.set $ab (f64x2.splat (f64.const 0)))
    (local.set $cd (f64x2.splat (f64.const 0)))
    (local.set $end (i32.add (local.get $row) (i32.shl (local.get $dim) (i32.const 2))))
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $row) (local.get $end)))
        (local.set $x (v128.load (local.get $row)))
        (local.set $ab (f64x2.add (local.get $ab)
          (f64x2.mul (v128.load (local.get $q)) (f64x2.promote_low_f32x4 (local.get $x)))))
        (local.set $cd (f64x2.add (local.get $cd)
          (f64x2.mul (v128.load offset=16 (local.get $q))
            (f64x2.promote_low_f32x4 (i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15 (local.get $x) (local.get $x))))))
        (local.set $row (i32.add (local.get $row) (i32.const 16)))
        (local.set $q (i32.add (local.get $q) (i32.const 32)))
        (br $l)))
    (f64.add
      (f64.add
        (f64.add (f64x2.extract_lane 0 (local.get $ab)) (f64x2.extract_lane 1 (local.get $ab)))
        (f64x2.extract_lane 0 (local.get $cd)))
      (f64x2.extract_lane 1 (local.get $cd))))

  ;; dots(q, vecs, dim, slots, count, out): out[k] (f64) = dot(q, row slots[k] (u32)) for k < count.
  ;; Returns a sum of the touched words (only so the touches are not optimised away).
  (func (export "dots") (param $q i32) (param $vecs i32) (param $dim i32) (param $slots i32) (param $count i32) (param $out i32) (result i32)
    (local $k i32) (local $stride i32) (local $half i32) (local $pf i32) (local $sink i32)
    (local.set $stride (i32.shl (local.get $dim) (i32.const 2)))
    (local.set $half (i32.and (i32.shr_u (local.get $stride) (i32.const 1)) (i32.const -4)))
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $k) (local.get $count)))
        ;; Touch the row 8 ahead (its start and middle), so its cache misses overlap this row's
        ;; work: the rows are scattered over the whole index.
        (if (i32.lt_u (i32.add (local.get $k) (i32.const 8)) (local.get $count))
          (then
            (local.set $pf (i32.add (local.get $vecs)
              (i32.mul (i32.load offset=32 (i32.add (local.get $slots) (i32.shl (local.get $k) (i32.const 2)))) (local.get $stride))))
            (local.set $sink (i32.add (local.get $sink)
              (i32.add (i32.load (local.get $pf)) (i32.load (i32.add (local.get $pf) (local.get $half))))))))
        (f64.store
          (i32.add (local.get $out) (i32.shl (local.get $k) (i32.const 3)))
          (call $dot (local.get $q)
            (i32.add (local.get $vecs) (i32.mul (i32.load (i32.add (local.get $slots) (i32.shl (local.get $k) (i32.const 2)))) (local.get $stride)))
            (local.get $dim)))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $l)))
    (local.get $sink))
)
