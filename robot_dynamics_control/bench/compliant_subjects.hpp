// bench_update's Cartesian impedance subjects: the engine's law alone (rd_compliant_control) and, where
// the package is built with RD_BENCH_PINOCCHIO_PREFIX (RD_BENCH_HAVE_PINOCCHIO), the same law written
// as CRISP writes it on Pinocchio (crisp_style_impedance.hpp), with the check that the two give the
// same torques when given the same damping.
#ifndef ROBOT_DYNAMICS_CONTROL__BENCH_COMPLIANT_SUBJECTS_HPP_
#define ROBOT_DYNAMICS_CONTROL__BENCH_COMPLIANT_SUBJECTS_HPP_

#include <memory>
#include <string>
#include <vector>

#include "robot_dynamics_engine/engine.h"
#ifdef RD_BENCH_HAVE_PINOCCHIO
#include "crisp_style_impedance.hpp"
#endif

namespace robot_dynamics_control::bench
{

constexpr const char * kCompliantRobot = "iiwa14";      // the robot both subjects run on
constexpr const char * kCompliantFrame = "iiwa_link_ee";  // its last frame, m.nf - 1
constexpr const char * kCrispName = "CRISP-style Cartesian impedance (Pinocchio)";

/// The engine's Cartesian impedance law on the model's last frame (m.nf - 1): its options, its input
/// and the state it reads (q, qd: written before each call), and the CRISP-style law of the same
/// gains where Pinocchio is built in.
struct CompliantLaw
{
  std::vector<double> kp{1000.0, 1000.0, 1000.0, 100.0, 100.0, 100.0};  // K [N/m on x, y, z; N m/rad]
  std::vector<double> null_k, posture;                                   // (nq) [N m/rad], [rad]
  std::vector<double> pose = std::vector<double>(16), twist = std::vector<double>(6, 0.0);  // the target
  std::vector<double> q, qd, tau;                                        // (nq) the state and the torques
  rd_compliant_options o{};
  rd_compliant_input in{};
#ifdef RD_BENCH_HAVE_PINOCCHIO
  std::unique_ptr<CrispStyleImpedance> crisp;
#endif
};

/// The law of `m`'s last frame held at its pose at the posture `q0` (nq) moved by (2, -1, 1) cm,
/// K_n = 10 N m/rad (ratio 1.0) towards q0, damping ratio 0.7, Lambda damped by 0.05 below s_min = 0.02,
/// no saturation (the library's defaults); the CRISP-style law (built from `urdf`, the joints in model
/// order) with CRISP's parameters for the same K and K_n. Throws std::runtime_error when Pinocchio's
/// model lacks a joint or the frame.
std::shared_ptr<CompliantLaw> compliant_law(const rd_model & m, rd_work & w, const std::vector<double> & q0,
                                            const std::string & urdf, const std::vector<std::string> & joints);

#ifdef RD_BENCH_HAVE_PINOCCHIO
/// Equal laws: at each state (q, qd; nq each) the CRISP-style law, given the engine's damping (D of
/// rd_impedance_damping on the engine's task inertia, D_n = 2 zeta_n sqrt(K_n A_jj)) and no clipping,
/// gives rd_compliant_control's torques at the exact task inertia (singular_threshold 0) less the
/// model's joint friction (rd_friction: the URDF's damping, which Pinocchio's rnea leaves out), and the
/// frame m.nf - 1 has Pinocchio's pose of kCompliantFrame. Returns the largest torque difference over
/// max |tau| of its state; throws std::runtime_error above 1e-6. Leaves the CRISP-style law with its
/// own parameters and its last torques zero.
double check_crisp(const rd_model & m, rd_work & w, CompliantLaw & c,
                   const std::vector<std::vector<double>> & qs, const std::vector<std::vector<double>> & qds);
#endif

}  // namespace robot_dynamics_control::bench

#endif  // ROBOT_DYNAMICS_CONTROL__BENCH_COMPLIANT_SUBJECTS_HPP_
