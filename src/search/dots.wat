;; Exact dot products for the in-memory vector index (dots.ts beside this file).
;; Build: wat2wasm --enable-simd dots.wat (or the `wabt` npm package), then base64 into WASM_BASE64.
;; Rows are f32, `dim` per row (dim % 4 == 0), back to back from `vecs`; the query is given widened
;; to f64 at `q`. Each product and sum is the f64 arithmetic of the TypeScript fallback, in its
;; order (four running sums over j mod 4 — here two f64x2 lanes each of ab and cd — then
;; ((a + b) + c) + d), so the results are bit-identical.
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
        (local.set $ab (f64x2.add (local.get $ab) (f64x2.mul (v128.load (local.get $q)) (f64x2.promote_low_f32x4 (local.get $x)))))
        (local.set $cd (f64x2.add (local.get $cd) (f64x2.mul (v128.load offset=16 (local.get $q))
            (f64x2.promote_low_f32x4 (i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15 (local.get $x) (local.get $x))))))
        (local.set $row (i32.add (local.get $row) (i32.const 16)))
        (local.set $q (i32.add (local.get $q) (i32.const 32)))
        (br $l)))
    (f64.add (f64.add (f64.add (f64x2.extract_lane 0 (local.get $ab)) (f64x2.extract_lane 1 (local.get $ab))) (f64x2.extract_lane 0 (local.get $cd))) (f64x2.extract_lane 1 (local.get $cd))))

  ;; sum of a (ab, cd) pair of accumulators, in the fallback's order
  (func $fin (param $ab v128) (param $cd v128) (result f64)
    (f64.add (f64.add (f64.add (f64x2.extract_lane 0 (local.get $ab)) (f64x2.extract_lane 1 (local.get $ab))) (f64x2.extract_lane 0 (local.get $cd))) (f64x2.extract_lane 1 (local.get $cd))))

  ;; dots(q, vecs, dim, slots, count, out): out[k] (f64) = dot(q, row slots[k] (u32)) for k < count.
  ;; The rows are scattered over the whole index: four at a time, so that four streams of loads
  ;; wait on memory together (one at a time with a touch-ahead was slower than the fallback).
  (func (export "dots") (param $q i32) (param $vecs i32) (param $dim i32) (param $slots i32) (param $count i32) (param $out i32) (result i32)
    (local $k i32) (local $stride i32) (local $j i32) (local $qp i32)
    (local $r1 i32) (local $r2 i32) (local $r3 i32) (local $r4 i32)
    (local $a1 v128) (local $c1 v128) (local $a2 v128) (local $c2 v128) (local $a3 v128) (local $c3 v128) (local $a4 v128) (local $c4 v128)
    (local $qab v128) (local $qcd v128) (local $x v128) (local $o i32)
    (local.set $stride (i32.shl (local.get $dim) (i32.const 2)))
    (block $done4
      (loop $l4
        (br_if $done4 (i32.gt_u (i32.add (local.get $k) (i32.const 4)) (local.get $count)))
        (local.set $o (i32.add (local.get $slots) (i32.shl (local.get $k) (i32.const 2))))
        (local.set $r1 (i32.add (local.get $vecs) (i32.mul (i32.load (local.get $o)) (local.get $stride))))
        (local.set $r2 (i32.add (local.get $vecs) (i32.mul (i32.load offset=4 (local.get $o)) (local.get $stride))))
        (local.set $r3 (i32.add (local.get $vecs) (i32.mul (i32.load offset=8 (local.get $o)) (local.get $stride))))
        (local.set $r4 (i32.add (local.get $vecs) (i32.mul (i32.load offset=12 (local.get $o)) (local.get $stride))))
        (local.set $a1 (f64x2.splat (f64.const 0))) (local.set $c1 (f64x2.splat (f64.const 0)))
        (local.set $a2 (f64x2.splat (f64.const 0))) (local.set $c2 (f64x2.splat (f64.const 0)))
        (local.set $a3 (f64x2.splat (f64.const 0))) (local.set $c3 (f64x2.splat (f64.const 0)))
        (local.set $a4 (f64x2.splat (f64.const 0))) (local.set $c4 (f64x2.splat (f64.const 0)))
        (local.set $j (i32.const 0))
        (local.set $qp (local.get $q))
        (block $dj (loop $lj
          (br_if $dj (i32.ge_u (local.get $j) (local.get $stride)))
          (local.set $qab (v128.load (local.get $qp)))
          (local.set $qcd (v128.load offset=16 (local.get $qp)))
          (local.set $x (v128.load (i32.add (local.get $r1) (local.get $j))))
          (local.set $a1 (f64x2.add (local.get $a1) (f64x2.mul (local.get $qab) (f64x2.promote_low_f32x4 (local.get $x)))))
          (local.set $c1 (f64x2.add (local.get $c1) (f64x2.mul (local.get $qcd) (f64x2.promote_low_f32x4 (i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15 (local.get $x) (local.get $x))))))
          (local.set $x (v128.load (i32.add (local.get $r2) (local.get $j))))
          (local.set $a2 (f64x2.add (local.get $a2) (f64x2.mul (local.get $qab) (f64x2.promote_low_f32x4 (local.get $x)))))
          (local.set $c2 (f64x2.add (local.get $c2) (f64x2.mul (local.get $qcd) (f64x2.promote_low_f32x4 (i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15 (local.get $x) (local.get $x))))))
          (local.set $x (v128.load (i32.add (local.get $r3) (local.get $j))))
          (local.set $a3 (f64x2.add (local.get $a3) (f64x2.mul (local.get $qab) (f64x2.promote_low_f32x4 (local.get $x)))))
          (local.set $c3 (f64x2.add (local.get $c3) (f64x2.mul (local.get $qcd) (f64x2.promote_low_f32x4 (i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15 (local.get $x) (local.get $x))))))
          (local.set $x (v128.load (i32.add (local.get $r4) (local.get $j))))
          (local.set $a4 (f64x2.add (local.get $a4) (f64x2.mul (local.get $qab) (f64x2.promote_low_f32x4 (local.get $x)))))
          (local.set $c4 (f64x2.add (local.get $c4) (f64x2.mul (local.get $qcd) (f64x2.promote_low_f32x4 (i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15 (local.get $x) (local.get $x))))))
          (local.set $j (i32.add (local.get $j) (i32.const 16)))
          (local.set $qp (i32.add (local.get $qp) (i32.const 32)))
          (br $lj)))
        (local.set $o (i32.add (local.get $out) (i32.shl (local.get $k) (i32.const 3))))
        (f64.store (local.get $o) (call $fin (local.get $a1) (local.get $c1)))
        (f64.store offset=8 (local.get $o) (call $fin (local.get $a2) (local.get $c2)))
        (f64.store offset=16 (local.get $o) (call $fin (local.get $a3) (local.get $c3)))
        (f64.store offset=24 (local.get $o) (call $fin (local.get $a4) (local.get $c4)))
        (local.set $k (i32.add (local.get $k) (i32.const 4)))
        (br $l4)))
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $k) (local.get $count)))
        (f64.store (i32.add (local.get $out) (i32.shl (local.get $k) (i32.const 3)))
          (call $dot (local.get $q) (i32.add (local.get $vecs) (i32.mul (i32.load (i32.add (local.get $slots) (i32.shl (local.get $k) (i32.const 2)))) (local.get $stride))) (local.get $dim)))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $l)))
    (i32.const 0))
)
