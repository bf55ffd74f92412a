//! The vertices local moving still has to visit: all of them at first, then only those with a
//! neighbour that moved since they were last visited (the others would make the same choice
//! unless a community they link to changed its total). A vertex is dropped when visited and
//! marked again when a neighbour moves, so each sweep after the first visits only the
//! neighbourhoods of the moves before it, and the marks depend only on the moves, not on the
//! thread count.

/// One bit per vertex, set while it is to be visited.
pub(crate) struct Active {
    bits: Vec<u64>,
    /// Vertices marked.
    count: usize,
}

impl Active {
    /// Every vertex of `0..n` to be visited.
    pub(crate) fn all(n: u32) -> Active {
        let n = n as usize;
        let mut bits = vec![u64::MAX; n.div_ceil(64)];
        if !n.is_multiple_of(64) {
            if let Some(last) = bits.last_mut() {
                *last = (1u64 << (n % 64)) - 1;
            }
        }
        Active { bits, count: n }
    }

    /// Whether any vertex is to be visited.
    pub(crate) fn any(&self) -> bool {
        self.count > 0
    }

    /// Marks `v` to be visited.
    pub(crate) fn mark(&mut self, v: u32) {
        let (word, bit) = ((v / 64) as usize, 1u64 << (v % 64));
        if self.bits[word] & bit == 0 {
            self.bits[word] |= bit;
            self.count += 1;
        }
    }

    /// Whether `v` is to be visited; unmarks it (it is being visited).
    pub(crate) fn take(&mut self, v: u32) -> bool {
        let (word, bit) = ((v / 64) as usize, 1u64 << (v % 64));
        let set = self.bits[word] & bit != 0;
        if set {
            self.bits[word] &= !bit;
            self.count -= 1;
        }
        set
    }

    /// The vertices of `order` to visit, taken, in chunks of at most `size` in that order;
    /// `visit` is called on each chunk and may mark vertices, those still ahead in `order`
    /// being visited in this pass.
    pub(crate) fn visit<E>(
        &mut self,
        order: &[u32],
        size: usize,
        mut visit: impl FnMut(&mut Active, &[u32]) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut chunk = Vec::with_capacity(size);
        let mut at = 0;
        while at < order.len() {
            chunk.clear();
            while at < order.len() && chunk.len() < size {
                if self.take(order[at]) {
                    chunk.push(order[at]);
                }
                at += 1;
            }
            if !chunk.is_empty() {
                visit(self, &chunk)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_visits_the_marked_vertices_in_order_and_those_marked_ahead() {
        let mut active = Active::all(70);
        let order: Vec<u32> = (0..70).rev().collect();
        let mut seen = Vec::new();
        active
            .visit(&order, 32, |_, chunk| {
                seen.extend_from_slice(chunk);
                Ok::<(), ()>(())
            })
            .unwrap();
        assert_eq!(seen, order);
        assert!(!active.any());
        // 69 (behind) and 3 (ahead) marked while visiting 40..: only 3 is visited in this pass.
        for v in [5, 40, 41] {
            active.mark(v);
        }
        let mut seen = Vec::new();
        active
            .visit(&order, 1, |active, chunk| {
                if chunk == [40] {
                    active.mark(69);
                    active.mark(3);
                }
                seen.extend_from_slice(chunk);
                Ok::<(), ()>(())
            })
            .unwrap();
        assert_eq!(seen, vec![41, 40, 5, 3]);
        assert!(active.any() && active.take(69) && !active.any());
    }
}
