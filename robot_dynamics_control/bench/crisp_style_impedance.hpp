// A bench peer of the Cartesian impedance law: the same law written as CRISP (utiasDSL/crisp_controllers,
// its CartesianController in impedance mode with the dynamic null-space projector) writes its update(),
// on Pinocchio: every call reads the joints by name, runs forwardKinematics and updateFramePlacements,
// takes the pose error [p_d - p; log3(R_d R^T)] (base axes [m, rad]) clipped per axis,
// computeFrameJacobian (LOCAL_WORLD_ALIGNED), a damped SVD pseudo-inverse of J, computeMinverse, the
// task inertia Mx = pinv(J M^-1 J^T) by a second damped SVD pseudo-inverse, the projector
// N = 1 - J^T (M^-1 J^T Mx)^T, the task torque J^T (K e - D J qd), the posture torque
// N (K_n (q_ref - q) - D_n qd) clipped per joint, computeAllTerms with computeCoriolisMatrix(q, qd) qd,
// computeGeneralizedGravity, and the torque-rate saturation; in dynamic-size Eigen matrices with
// their temporaries, as it has them (it allocates in every call).
//
// Left out (elementwise work on nq values, or ROS machinery, whose absence only makes this peer
// faster): its exponential filters of the state, the target and the output torque, the joint-limit
// repulsion, the friction model, the target wrench, the parameter refresh and the logging.
//
// Only bench_update uses it; its Pinocchio headers stay in crisp_style_impedance.cpp, compiled with
// the flags of the `pin` wheel (RD_BENCH_PINOCCHIO_PREFIX in the package's CMakeLists.txt).
#ifndef ROBOT_DYNAMICS_CONTROL__BENCH_CRISP_STYLE_IMPEDANCE_HPP_
#define ROBOT_DYNAMICS_CONTROL__BENCH_CRISP_STYLE_IMPEDANCE_HPP_

#include <memory>
#include <string>
#include <vector>

namespace robot_dynamics_control::bench
{

/// The law's parameters, CRISP's cartesian_controller parameters of the same meaning.
struct CrispStyleParameters
{
  double stiffness[6];                    // K, the diagonal [N/m on x, y, z; N m/rad on rx, ry, rz]
  double damping[36];                     // D (6 x 6, row-major) [N s/m, N m s/rad]
  std::vector<double> null_stiffness;     // K_n, the diagonal (nq) [N m/rad]
  std::vector<double> null_damping;       // D_n, the diagonal (nq) [N m s/rad]
  double error_clip[6];                   // the pose error's bound per axis [m on x, y, z; rad on rx, ry, rz]
  double null_max_tau;                    // the posture torque's bound per joint [N m]
  double regularization;                  // epsilon of J's damped pseudo-inverse
  double operational_space_regularization;  // epsilon of the task inertia's damped pseudo-inverse
  double max_delta_tau;                   // the largest change of a joint torque per call [N m]
};

/// CRISP's defaults for the stiffness K (6) and the posture stiffness k_n on nq joints: D = 2 sqrt(K)
/// and D_n = 2 sqrt(k_n) on the diagonals, the error clipped to 0.1 m and 0.5 rad, the posture torque
/// to 5 N m, epsilon 1e-6 for J and 0.01 for the task inertia, 0.5 N m per call.
CrispStyleParameters crisp_defaults(const double stiffness[6], size_t nq, double null_stiffness);

class CrispStyleImpedance
{
public:
  /// The model of `urdf` (Pinocchio's URDF parser), `joints` (nq, the bench's order) and the frame
  /// controlled. Throws std::runtime_error for a joint or frame that the model lacks.
  CrispStyleImpedance(const std::string & urdf, const std::vector<std::string> & joints, const std::string & frame);
  ~CrispStyleImpedance();
  CrispStyleImpedance(const CrispStyleImpedance &) = delete;
  CrispStyleImpedance & operator=(const CrispStyleImpedance &) = delete;

  void set_parameters(const CrispStyleParameters & p);
  /// The target pose T_base_frame (4 x 4, row-major) [m].
  void set_target(const double T[16]);
  /// The posture q_ref (nq) [rad]; its velocity is 0.
  void set_posture(const double * q_ref);
  /// The last torques, the rate limit's start (nq) [N m].
  void set_previous(const double * tau);

  /// One update() at the measured q, qd (nq each, the joints' order) [rad, rad/s]: false when the
  /// frame's pose is not finite (the torques then stay the last ones).
  bool update(const double * q, const double * qd);
  /// The torques of the last update (nq) [N m].
  const double * tau() const;
  /// The frame's pose T_base_frame of the last update (4 x 4, row-major) [m].
  void frame_pose(double T[16]) const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace robot_dynamics_control::bench

#endif  // ROBOT_DYNAMICS_CONTROL__BENCH_CRISP_STYLE_IMPEDANCE_HPP_
